//! The derive input as sharded sees it: the struct's fields and attributes, each still holding
//! the user's syn nodes for error spans.

use crate::attr::{ContainerAttrs, FieldAttrs, SerdeContainer, SerdeField};
use crate::case::RenameRule;
use crate::ctxt::Ctxt;

/// A struct that derives `Sharded`.
pub struct Container<'a> {
    pub ident: &'a syn::Ident,
    pub input: &'a syn::DeriveInput,
    pub attrs: ContainerAttrs,
    pub serde: SerdeContainer,
    /// Empty when the input is not a struct with named fields (already reported).
    pub fields: Vec<Field<'a>>,
}

/// A named field.
pub struct Field<'a> {
    pub ident: &'a syn::Ident,
    pub ty: &'a syn::Type,
    pub original: &'a syn::Field,
    pub attrs: FieldAttrs,
    pub serde: SerdeField,
    /// The name serde stores the field under.
    pub stored_name: String,
}

impl<'a> Container<'a> {
    /// Parses attributes, reporting per-attribute errors into `cx`.
    pub fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Container<'a> {
        let attrs = ContainerAttrs::from_ast(cx, &input.attrs);
        let serde = SerdeContainer::from_ast(&input.attrs);
        let named = match &input.data {
            syn::Data::Struct(data) => match &data.fields {
                syn::Fields::Named(named) => Some(named),
                syn::Fields::Unnamed(fields) => {
                    cx.error_spanned_by(
                        fields,
                        "`Sharded` needs named fields: a Firestore document is a map of named fields, so a tuple struct cannot be one",
                    );
                    None
                }
                syn::Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        "`Sharded` needs a struct with named fields: a unit struct stores no order field",
                    );
                    None
                }
            },
            syn::Data::Enum(data) => {
                cx.error_spanned_by(
                    data.enum_token,
                    "`Sharded` can only be derived for a struct with named fields, not an enum",
                );
                None
            }
            syn::Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    "`Sharded` can only be derived for a struct with named fields, not a union",
                );
                None
            }
        };
        let fields = named
            .map(|named| {
                named
                    .named
                    .iter()
                    .map(|field| Field::from_ast(cx, field, serde.rename_all))
                    .collect()
            })
            .unwrap_or_default();
        Container {
            ident: &input.ident,
            input,
            attrs,
            serde,
            fields,
        }
    }

    pub fn field(&self, rust_name: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|field| field.ident == rust_name)
    }
}

impl<'a> Field<'a> {
    /// Whether serde stores this field under its own name: not always skipped (a
    /// `skip_serializing_if` field is stored when present), not flattened.
    pub fn is_stored_by_name(&self) -> bool {
        stored_by_name(&self.serde)
    }

    /// Stored by name, as its Rust type stores (no serde adapter): a typed transform's field.
    pub fn is_transformable(&self) -> bool {
        self.is_stored_by_name() && self.serde.custom.is_none()
    }

    fn from_ast(cx: &Ctxt, field: &'a syn::Field, rename_all: Option<RenameRule>) -> Field<'a> {
        let ident = field.ident.as_ref().expect("named field");
        let serde = SerdeField::from_ast(&field.attrs);
        let stored_name = stored_name(ident, &serde, rename_all);
        Field {
            ident,
            ty: &field.ty,
            original: field,
            attrs: FieldAttrs::from_ast(cx, &field.attrs),
            serde,
            stored_name,
        }
    }
}

/// The name serde stores a field under: its `rename`, else `rename_all` applied, else its own.
pub fn stored_name(
    ident: &syn::Ident,
    serde: &SerdeField,
    rename_all: Option<RenameRule>,
) -> String {
    let rust_name = ident.unraw().to_string();
    match (&serde.rename, rename_all) {
        (Some(rename), _) => rename.clone(),
        (None, Some(rule)) => rule.apply_to_field(&rust_name),
        (None, None) => rust_name,
    }
}

fn stored_by_name(serde: &SerdeField) -> bool {
    let always_skipped = serde
        .skipped
        .as_ref()
        .is_some_and(|path| !path.is_ident(crate::symbol::SKIP_SERIALIZING_IF));
    !always_skipped && serde.flatten.is_none()
}

/// `#[derive(StoredNames)]`: (Rust name without `r#`, stored name) of every named field, no
/// stored name where serde does not store the field under a name of its own (skipped or
/// flattened). Only structs with named fields.
pub fn stored_names(cx: &Ctxt, input: &syn::DeriveInput) -> Vec<(String, Option<String>)> {
    let syn::Data::Struct(syn::DataStruct {
        fields: syn::Fields::Named(named),
        ..
    }) = &input.data
    else {
        cx.error_spanned_by(
            &input.ident,
            "`StoredNames` is for a struct with named fields, the kind a nested index path goes through",
        );
        return Vec::new();
    };
    let rename_all = SerdeContainer::from_ast(&input.attrs).rename_all;
    named
        .named
        .iter()
        .map(|field| {
            let ident = field.ident.as_ref().expect("named field");
            let serde = SerdeField::from_ast(&field.attrs);
            let stored = stored_by_name(&serde).then(|| stored_name(ident, &serde, rename_all));
            (ident.unraw().to_string(), stored)
        })
        .collect()
}

use syn::ext::IdentExt as _;
