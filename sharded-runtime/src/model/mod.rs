//! The model of a sharded type: what a `#[derive(Sharded)]` declares and stores — the
//! `Sharded` trait and its sealed bounds, shard values and how writes draw them while a shard
//! set changes, order keys, numeric and counter fields, stored names, parents, document ids
//! and names, and Firestore's order of values. Plain data and rules: it imports nothing from
//! the rooms above it (writes, queries, counters, jobs, Datastore), and sends nothing.

pub(crate) mod declared;
pub(crate) mod document_id;
pub(crate) mod document_path;
pub(crate) mod fields;
pub(crate) mod numeric;
pub(crate) mod order_key;
pub(crate) mod parent;
pub mod reshard;
pub(crate) mod shard;
pub(crate) mod sharded;
pub(crate) mod stored;
pub(crate) mod stored_names;
pub(crate) mod value_order;
