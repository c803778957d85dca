//! What the front end reads off a field's Rust type: its last path segment, the `T` of an
//! `Option<T>`, whether it looks like a time.

use crate::ast::Field;

pub(crate) fn last_segment(ty: &syn::Type) -> Option<(&syn::PathSegment, Vec<&syn::PathSegment>)> {
    match ty {
        syn::Type::Path(type_path) => {
            let segments: Vec<&syn::PathSegment> = type_path.path.segments.iter().collect();
            Some((*segments.last()?, segments))
        }
        syn::Type::Group(group) => last_segment(&group.elem),
        syn::Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

pub(crate) fn looks_like_time(field: &Field) -> bool {
    let name = field.ident.to_string();
    let type_name = last_segment(field.ty)
        .map(|(segment, _)| segment.ident.to_string())
        .unwrap_or_default();
    ["Timestamp", "Instant", "SystemTime"]
        .iter()
        .any(|t| type_name.contains(t))
        || ["timestamp", "time", "created", "updated"]
            .iter()
            .any(|t| name.contains(t))
}

/// `T` for `Option<T>` (a query compares with a present value), else the type itself.
pub(crate) fn value_type(ty: &syn::Type) -> syn::Type {
    option_inner(ty).unwrap_or(ty).clone()
}

/// `E` of `Vec<E>` (by the last path segment, as `Option` is read).
pub(crate) fn vec_element(ty: &syn::Type) -> Option<&syn::Type> {
    if let Some((segment, _)) = last_segment(ty)
        && segment.ident == "Vec"
        && let syn::PathArguments::AngleBracketed(args) = &segment.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return Some(inner);
    }
    None
}

/// `T` of `Option<T>`.
pub(crate) fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    if let Some((segment, _)) = last_segment(ty)
        && segment.ident == "Option"
        && let syn::PathArguments::AngleBracketed(args) = &segment.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return Some(inner);
    }
    None
}

/// The name a type is stored by, as `StoredType::of_rust_type` reads it: its last path
/// segment's identifier (`Vec` of `std::vec::Vec<u8>`), `Vec` for an array type.
pub(crate) fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Array(_) => Some("Vec".to_owned()),
        _ => last_segment(ty).map(|(segment, _)| segment.ident.to_string()),
    }
}
