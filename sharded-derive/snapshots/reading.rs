///The query `Reading::query().venue(..)` (`Windowed` after a limit or a cursor); `CursorOf<ReadingVenueQuery>` and `PageOf<ReadingVenueQuery>` are its cursor and page.
#[allow(dead_code)]
pub(crate) type ReadingVenueQuery<Window = ::sharded_runtime::reads::Whole> = ::sharded_runtime::ShardedQuery<
    Reading,
    9126047351902211420u64,
    ::sharded_runtime::reads::InCollection,
    Window,
>;
#[doc(hidden)]
#[allow(
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    unused_qualifications,
    clippy::all
)]
const _: () = {
    ///The typed queries of `Reading`: one method per `#[sharded(index)]` path (and its `_in`), one per `index(...)` field set, and `_contains` and `_contains_any` per `#[sharded(contains)]` array (`all()` is on `Queries`, which dereferences to this).
    pub(crate) struct ReadingQueries;
    impl ReadingQueries {
        ///Documents whose `venue` equals `value`, by `at` descending.
        #[inline]
        pub(crate) fn venue(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> ReadingVenueQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `venue` equals any of `values` (Firestore's `in`: 1 to 30 values), by `at` descending; the same query type, cursors and index as `venue`.
        #[inline]
        pub(crate) fn venue_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> ReadingVenueQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        #[doc(hidden)]
        pub(crate) fn seq<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Reading> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        pub(crate) fn seq_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Reading> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
    }
    ///The stored fields of `Reading`, for `ShardedCollection::update_fields`.
    pub(crate) struct ReadingFields {
        ///The stored field `venue`.
        pub(crate) venue: ::sharded_runtime::writes::Field<Reading>,
        ///The stored field `at`.
        pub(crate) at: ::sharded_runtime::writes::Field<Reading>,
        ///The stored field `seq`.
        pub(crate) seq: ::sharded_runtime::writes::Field<Reading>,
    }
    ///The stored fields of `Reading` typed by their Rust types, for `ShardedCollection::transform`.
    pub(crate) struct ReadingTransforms {
        ///The stored field `venue`, to transform.
        pub(crate) venue: ::sharded_runtime::writes::TypedField<Reading, String>,
        ///The stored field `at`, to transform.
        pub(crate) at: ::sharded_runtime::writes::TypedField<
            Reading,
            FirestoreTimestamp,
        >,
        ///The stored field `seq`, to transform.
        pub(crate) seq: ::sharded_runtime::writes::TypedField<Reading, i64>,
    }
    impl Reading {
        ///The typed queries of this collection; see the methods of what it returns.
        #[inline]
        pub(crate) fn query() -> ::sharded_runtime::reads::Queries<Self> {
            ::sharded_runtime::__private::queries::<Reading>(ReadingQueries)
        }
        ///The stored fields of this collection, to name in a field-masked update.
        #[inline]
        pub(crate) fn fields() -> ReadingFields {
            ReadingFields {
                venue: ::sharded_runtime::__private::field::<Reading>("venue"),
                at: ::sharded_runtime::__private::field::<Reading>("at"),
                seq: ::sharded_runtime::__private::field::<Reading>("seq"),
            }
        }
        ///The stored fields of this collection typed by their Rust types, to transform on the server.
        #[inline]
        pub(crate) fn transforms() -> ReadingTransforms {
            ReadingTransforms {
                venue: ::sharded_runtime::__private::typed_field::<
                    Reading,
                    String,
                >("venue"),
                at: ::sharded_runtime::__private::typed_field::<
                    Reading,
                    FirestoreTimestamp,
                >("at"),
                seq: ::sharded_runtime::__private::typed_field::<Reading, i64>("seq"),
            }
        }
    }
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredTopLevel for Reading {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::TopLevel for Reading {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::Derived for Reading {}
    #[automatically_derived]
    impl ::sharded_runtime::Sharded for Reading {
        const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<
            'static,
        > = ::sharded_runtime::__private::CollectionDescription {
            collection: "moving",
            shard_field: "shard",
            shard_values: &["c", "d"],
            order_field: "at",
            direction: ::sharded_runtime::__private::Direction::Descending,
            order_type: ::sharded_runtime::__private::StoredType::Timestamp,
            fields: &[
                ::sharded_runtime::__private::StoredField {
                    path: "venue",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "at",
                    stored_type: ::sharded_runtime::__private::StoredType::Timestamp,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "seq",
                    stored_type: ::sharded_runtime::__private::StoredType::Integer,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
            ],
            previous_shard_values: &["a", "b", "c"],
            reshard_since: ::core::option::Option::Some(1795374000u64),
            indexed_fields: &["venue"],
            ..::sharded_runtime::__private::CollectionDescription::EMPTY
        };
        const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
            query_names: &["venue"],
            required_fields: &["at", "venue"],
            required_segments: ::sharded_runtime::__private::PLAIN_PATHS,
            stored_fields: &["venue", "at", "seq"],
        };
        const READ_SHARD_VALUES: &'static [&'static str] = &["c", "d", "a", "b"];
        const NEW_SHARD_VALUES: &'static [&'static str] = &["d"];
        const KEPT_SHARD_VALUES: &'static [&'static str] = &["c"];
        type QueryMethods = ReadingQueries;
        type AggregateFields = ::sharded_runtime::__private::NoFields;
        type RangeFields = ::sharded_runtime::__private::NoFields;
        type OrderValue = FirestoreTimestamp;
    }
};
