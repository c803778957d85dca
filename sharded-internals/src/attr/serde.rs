//! The parts of `#[serde(...)]` that decide stored names.

use syn::meta::ParseNestedMeta;
use syn::{LitStr, Token};

use super::values::skip_value;
use super::*;
use crate::case::RenameRule;
use crate::symbol::*;

impl SerdeContainer {
    /// serde reports its own syntax errors; anything not understood here is left to it.
    pub fn from_ast(attrs: &[syn::Attribute]) -> Self {
        let mut out = SerdeContainer::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident(SERDE)) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(RENAME_ALL) {
                    if let Some(name) = serialize_name(&meta)? {
                        out.rename_all = RenameRule::from_name(&name);
                    }
                } else if meta.path.is_ident(DENY_UNKNOWN_FIELDS) {
                    out.deny_unknown_fields = Some(meta.path.clone());
                } else if meta.path.is_ident(TRANSPARENT) {
                    out.transparent = Some(meta.path.clone());
                } else if meta.path.is_ident(INTO) {
                    out.into = Some(meta.path.clone());
                    skip_value(&meta)?;
                } else if meta.path.is_ident(DEFAULT) {
                    out.default = true;
                    skip_value(&meta)?;
                } else {
                    skip_value(&meta)?;
                }
                Ok(())
            });
        }
        out
    }
}

impl SerdeField {
    pub fn from_ast(attrs: &[syn::Attribute]) -> Self {
        let mut out = SerdeField::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident(SERDE)) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(RENAME) {
                    if let Some(name) = serialize_name(&meta)? {
                        out.rename = Some(name);
                    }
                } else if meta.path.is_ident(SKIP_SERIALIZING_IF) {
                    out.skipped = Some(meta.path.clone());
                    if meta.input.peek(Token![=]) {
                        let predicate: syn::LitStr = meta.value()?.parse()?;
                        out.skip_if = Some(predicate.value());
                    }
                } else if meta.path.is_ident(SKIP) || meta.path.is_ident(SKIP_SERIALIZING) {
                    out.skipped = Some(meta.path.clone());
                    skip_value(&meta)?;
                } else if meta.path.is_ident(FLATTEN) {
                    out.flatten = Some(meta.path.clone());
                } else if meta.path.is_ident(DEFAULT) || meta.path.is_ident(SKIP_DESERIALIZING) {
                    out.optional_on_read = true;
                    skip_value(&meta)?;
                } else if [WITH, SERIALIZE_WITH, DESERIALIZE_WITH, GETTER]
                    .iter()
                    .any(|key| meta.path.is_ident(key))
                {
                    out.custom.get_or_insert_with(|| meta.path.clone());
                    skip_value(&meta)?;
                } else {
                    skip_value(&meta)?;
                }
                Ok(())
            });
        }
        out
    }
}

/// The name from `rename = "x"` or `rename(serialize = "x", ...)`: the stored one.
pub(super) fn serialize_name(meta: &ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut name = None;
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident(SERIALIZE) {
                let lit: LitStr = inner.value()?.parse()?;
                name = Some(lit.value());
            } else {
                skip_value(&inner)?;
            }
            Ok(())
        })?;
    }
    Ok(name)
}
