//! The fields writes name: `T::fields()` for field-masked updates and `T::transforms()` for
//! typed server-side transforms.

use quote::quote;
use sharded_internals::Model;

use crate::namespace::{Kind, Member, Members, Namespace};

/// `T::fields()`: what it returns has one public `Field<T>` per stored field, for field-masked
/// updates.
pub(super) fn fields<'a>(model: &'a Model) -> Namespace<'a> {
    let ident = model.ident;
    let members = model.stored_fields.iter().map(|(field, path)| Member {
        name: field,
        doc: format!("The stored field `{path}`."),
        ty: quote!(::sharded_runtime::writes::Field<#ident>),
        value: Some(quote!(::sharded_runtime::__private::field::<#ident>(#path))),
    });
    Namespace {
        kind: Kind::Fields,
        doc: format!("The stored fields of `{ident}`, for `ShardedCollection::update_fields`."),
        members: Members::Fields(members.collect()),
    }
}

/// `T::transforms()`: one public `TypedField<T, V>` per stored field without a serde adapter,
/// `V` its Rust type, whose methods are the transforms that type takes.
pub(super) fn transforms<'a>(model: &'a Model) -> Namespace<'a> {
    let ident = model.ident;
    let members = model
        .transformable_fields
        .iter()
        .map(|(field, ty, path)| Member {
            name: field,
            doc: format!("The stored field `{path}`, to transform."),
            ty: quote!(::sharded_runtime::writes::TypedField<#ident, #ty>),
            value: Some(quote!(::sharded_runtime::__private::typed_field::<#ident, #ty>(#path))),
        });
    Namespace {
        kind: Kind::Transforms,
        doc: format!(
            "The stored fields of `{ident}` typed by their Rust types, for `ShardedCollection::transform`."
        ),
        members: Members::Fields(members.collect()),
    }
}
