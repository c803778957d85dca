//! The Firestore wire every room sends through: which failures are retried and how long to
//! wait, status codes, the server's clock and the times it stamps, batch gets sent as
//! written, text tokens, the streams listeners and folders are read through, and options
//! checked where they enter. It imports no other room.

#[macro_use]
pub(crate) mod declined;
pub(crate) mod lookup;
pub(crate) mod option_check;
pub(crate) mod retry;
pub(crate) mod server_clock;
pub(crate) mod status;
pub(crate) mod token;
pub(crate) mod until_error;
