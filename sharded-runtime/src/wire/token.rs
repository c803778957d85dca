//! The text cursors and checkpoints travel as (in a URL, a file, an environment variable):
//! their JSON, base64url without padding.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` as a token.
pub(crate) fn encode<T: Serialize>(value: &T) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).expect("tokens serialize"))
}

/// The value the token `token` stands for, or why it stands for none.
pub(crate) fn decode<T: DeserializeOwned>(token: &str) -> Result<T, String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|error| error.to_string())?;
    serde_json::from_slice(&bytes).map_err(|error| error.to_string())
}
