///The query `Sale::query().region(..)` (`Windowed` after a limit or a cursor); `CursorOf<SaleRegionQuery>` and `PageOf<SaleRegionQuery>` are its cursor and page.
#[allow(dead_code)]
type SaleRegionQuery<Window = ::sharded_runtime::reads::Whole> = ::sharded_runtime::ShardedQuery<
    Sale,
    14363569259933213917u64,
    ::sharded_runtime::reads::InCollection,
    Window,
>;
///The query `Sale::query().channel(..)` (`Windowed` after a limit or a cursor); `CursorOf<SaleChannelQuery>` and `PageOf<SaleChannelQuery>` are its cursor and page.
#[allow(dead_code)]
type SaleChannelQuery<Window = ::sharded_runtime::reads::Whole> = ::sharded_runtime::ShardedQuery<
    Sale,
    11889853325967551908u64,
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
    ///`Sale::aggregates().amount`'s queries.
    pub struct SaleAmountSummed;
    #[automatically_derived]
    impl ::sharded_runtime::bounds::SummedOver<16640971154896050852u64>
    for SaleAmountSummed {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::SummedOver<14363569259933213917u64>
    for SaleAmountSummed {}
    ///`Sale::ranges().discount`'s queries.
    pub struct SaleDiscountRanged;
    #[automatically_derived]
    impl ::sharded_runtime::bounds::RangedOver<16640971154896050852u64>
    for SaleDiscountRanged {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::RangedOver<11889853325967551908u64>
    for SaleDiscountRanged {}
    ///The typed queries of `Sale`: one method per `#[sharded(index)]` path (and its `_in`), one per `index(...)` field set, and `_contains` and `_contains_any` per `#[sharded(contains)]` array (`all()` is on `Queries`, which dereferences to this).
    struct SaleQueries;
    impl SaleQueries {
        ///Documents whose `region` equals `value`, by `at` ascending.
        #[inline]
        fn region(&self, value: impl ::core::convert::Into<String>) -> SaleRegionQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `region` equals any of `values` (Firestore's `in`: 1 to 30 values), by `at` ascending; the same query type, cursors and index as `region`.
        #[inline]
        fn region_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> SaleRegionQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        ///Documents whose `channel` equals `value`, by `at` ascending.
        #[inline]
        fn channel(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> SaleChannelQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `channel` equals any of `values` (Firestore's `in`: 1 to 30 values), by `at` ascending; the same query type, cursors and index as `channel`.
        #[inline]
        fn channel_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> SaleChannelQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        #[doc(hidden)]
        fn amount<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn amount_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn qty<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn qty_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn discount<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn discount_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn rating<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        fn rating_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Sale> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
    }
    ///The stored fields of `Sale`, for `ShardedCollection::update_fields`.
    struct SaleFields {
        ///The stored field `region`.
        region: ::sharded_runtime::writes::Field<Sale>,
        ///The stored field `channel`.
        channel: ::sharded_runtime::writes::Field<Sale>,
        ///The stored field `amount`.
        amount: ::sharded_runtime::writes::Field<Sale>,
        ///The stored field `qty`.
        qty: ::sharded_runtime::writes::Field<Sale>,
        ///The stored field `discount`.
        discount: ::sharded_runtime::writes::Field<Sale>,
        ///The stored field `rating`.
        rating: ::sharded_runtime::writes::Field<Sale>,
        ///The stored field `at`.
        at: ::sharded_runtime::writes::Field<Sale>,
    }
    ///The stored fields of `Sale` typed by their Rust types, for `ShardedCollection::transform`.
    struct SaleTransforms {
        ///The stored field `region`, to transform.
        region: ::sharded_runtime::writes::TypedField<Sale, String>,
        ///The stored field `channel`, to transform.
        channel: ::sharded_runtime::writes::TypedField<Sale, String>,
        ///The stored field `amount`, to transform.
        amount: ::sharded_runtime::writes::TypedField<Sale, i64>,
        ///The stored field `qty`, to transform.
        qty: ::sharded_runtime::writes::TypedField<Sale, u32>,
        ///The stored field `discount`, to transform.
        discount: ::sharded_runtime::writes::TypedField<Sale, f64>,
        ///The stored field `rating`, to transform.
        rating: ::sharded_runtime::writes::TypedField<Sale, Option<i32>>,
        ///The stored field `at`, to transform.
        at: ::sharded_runtime::writes::TypedField<Sale, i64>,
    }
    ///The numeric fields of `Sale` with typed `sum` and `avg` queries.
    struct SaleAggregates {
        ///The numeric field `amount`, to sum or average over the queries `all`, `region`.
        amount: ::sharded_runtime::reads::NumericField<Sale, SaleAmountSummed>,
        ///The numeric field `qty`, to sum or average.
        qty: ::sharded_runtime::reads::NumericField<
            Sale,
            ::sharded_runtime::bounds::AllQueries,
        >,
    }
    ///The fields of `Sale` with range, `!=` and `not-in` filters.
    struct SaleRanges {
        ///The field `discount`, to filter by range, `!=` or `not-in` in the queries `all`, `channel`.
        discount: ::sharded_runtime::reads::RangeField<Sale, f64, SaleDiscountRanged>,
        ///The field `rating`, to filter by range, `!=` or `not-in` in any query.
        rating: ::sharded_runtime::reads::RangeField<
            Sale,
            i32,
            ::sharded_runtime::bounds::AllQueries,
        >,
    }
    impl Sale {
        ///The typed queries of this collection; see the methods of what it returns.
        #[inline]
        fn query() -> ::sharded_runtime::reads::Queries<Self> {
            ::sharded_runtime::__private::queries::<Sale>(SaleQueries)
        }
        ///The stored fields of this collection, to name in a field-masked update.
        #[inline]
        fn fields() -> SaleFields {
            SaleFields {
                region: ::sharded_runtime::__private::field::<Sale>("region"),
                channel: ::sharded_runtime::__private::field::<Sale>("channel"),
                amount: ::sharded_runtime::__private::field::<Sale>("amount"),
                qty: ::sharded_runtime::__private::field::<Sale>("qty"),
                discount: ::sharded_runtime::__private::field::<Sale>("discount"),
                rating: ::sharded_runtime::__private::field::<Sale>("rating"),
                at: ::sharded_runtime::__private::field::<Sale>("at"),
            }
        }
        ///The stored fields of this collection typed by their Rust types, to transform on the server.
        #[inline]
        fn transforms() -> SaleTransforms {
            SaleTransforms {
                region: ::sharded_runtime::__private::typed_field::<
                    Sale,
                    String,
                >("region"),
                channel: ::sharded_runtime::__private::typed_field::<
                    Sale,
                    String,
                >("channel"),
                amount: ::sharded_runtime::__private::typed_field::<Sale, i64>("amount"),
                qty: ::sharded_runtime::__private::typed_field::<Sale, u32>("qty"),
                discount: ::sharded_runtime::__private::typed_field::<
                    Sale,
                    f64,
                >("discount"),
                rating: ::sharded_runtime::__private::typed_field::<
                    Sale,
                    Option<i32>,
                >("rating"),
                at: ::sharded_runtime::__private::typed_field::<Sale, i64>("at"),
            }
        }
        ///The numeric fields of this collection (`#[sharded(aggregate)]`), to sum or average.
        #[inline]
        fn aggregates() -> SaleAggregates {
            SaleAggregates {
                amount: ::sharded_runtime::__private::numeric_field::<
                    Sale,
                    i64,
                    SaleAmountSummed,
                >("amount"),
                qty: ::sharded_runtime::__private::numeric_field::<
                    Sale,
                    u32,
                    ::sharded_runtime::bounds::AllQueries,
                >("qty"),
            }
        }
        ///The fields of this collection with range filters (`#[sharded(range)]`), to pass to a query's `filter`.
        #[inline]
        fn ranges() -> SaleRanges {
            SaleRanges {
                discount: ::sharded_runtime::__private::range_field::<
                    Sale,
                    f64,
                    SaleDiscountRanged,
                >("discount"),
                rating: ::sharded_runtime::__private::range_field::<
                    Sale,
                    i32,
                    ::sharded_runtime::bounds::AllQueries,
                >("rating"),
            }
        }
    }
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredTopLevel for Sale {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::TopLevel for Sale {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredAggregates for Sale {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::HasAggregates for Sale {
        fn fields() -> SaleAggregates {
            Sale::aggregates()
        }
    }
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredRanges for Sale {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::HasRanges for Sale {
        fn fields() -> SaleRanges {
            Sale::ranges()
        }
    }
    #[automatically_derived]
    impl ::sharded_runtime::__private::Derived for Sale {}
    #[automatically_derived]
    impl ::sharded_runtime::Sharded for Sale {
        const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<
            'static,
        > = ::sharded_runtime::__private::CollectionDescription {
            collection: "sales",
            shard_field: "shard",
            shard_values: ::sharded_runtime::__private::numbered_shards(3usize),
            order_field: "at",
            direction: ::sharded_runtime::__private::Direction::Ascending,
            order_type: ::sharded_runtime::__private::StoredType::Integer,
            fields: &[
                ::sharded_runtime::__private::StoredField {
                    path: "region",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "channel",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "amount",
                    stored_type: ::sharded_runtime::__private::StoredType::Integer,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "qty",
                    stored_type: ::sharded_runtime::__private::StoredType::Integer,
                    required: true,
                    integer_range: ::core::option::Option::Some([0i64, 4294967295i64]),
                },
                ::sharded_runtime::__private::StoredField {
                    path: "discount",
                    stored_type: ::sharded_runtime::__private::StoredType::Number,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "rating",
                    stored_type: ::sharded_runtime::__private::StoredType::Integer,
                    required: false,
                    integer_range: ::core::option::Option::Some([
                        -2147483648i64,
                        2147483647i64,
                    ]),
                },
                ::sharded_runtime::__private::StoredField {
                    path: "at",
                    stored_type: ::sharded_runtime::__private::StoredType::Integer,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
            ],
            indexed_fields: &["region", "channel"],
            aggregate_fields: &["qty"],
            aggregations: &[
                ::sharded_runtime::__private::FieldOfQuery {
                    field: "amount",
                    compared: &[],
                    contains: false,
                },
                ::sharded_runtime::__private::FieldOfQuery {
                    field: "amount",
                    compared: &["region"],
                    contains: false,
                },
            ],
            range_fields: &["rating"],
            ranges: &[
                ::sharded_runtime::__private::FieldOfQuery {
                    field: "discount",
                    compared: &[],
                    contains: false,
                },
                ::sharded_runtime::__private::FieldOfQuery {
                    field: "discount",
                    compared: &["channel"],
                    contains: false,
                },
            ],
            ..::sharded_runtime::__private::CollectionDescription::EMPTY
        };
        const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
            query_names: &["region", "channel"],
            required_fields: &["at", "region", "channel"],
            required_segments: ::sharded_runtime::__private::PLAIN_PATHS,
            stored_fields: &[
                "region",
                "channel",
                "amount",
                "qty",
                "discount",
                "rating",
                "at",
            ],
        };
        type QueryMethods = SaleQueries;
        type AggregateFields = SaleAggregates;
        type RangeFields = SaleRanges;
        type OrderValue = i64;
    }
};
