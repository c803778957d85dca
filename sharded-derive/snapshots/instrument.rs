///The query `Instrument::query().price_currency(..)` (`Windowed` after a limit or a cursor); `CursorOf<InstrumentPriceCurrencyQuery>` and `PageOf<InstrumentPriceCurrencyQuery>` are its cursor and page.
#[allow(dead_code)]
pub type InstrumentPriceCurrencyQuery<Window = ::sharded_runtime::reads::Whole> = ::sharded_runtime::ShardedQuery<
    Instrument,
    5530817863551347460u64,
    ::sharded_runtime::reads::InCollection,
    Window,
>;
///The query `Instrument::query().exchange(..)` (`Windowed` after a limit or a cursor); `CursorOf<InstrumentExchangeQuery>` and `PageOf<InstrumentExchangeQuery>` are its cursor and page.
#[allow(dead_code)]
pub type InstrumentExchangeQuery<Window = ::sharded_runtime::reads::Whole> = ::sharded_runtime::ShardedQuery<
    Instrument,
    10138467006931075936u64,
    ::sharded_runtime::reads::InCollection,
    Window,
>;
///The query `Instrument::query().instrument_type(..)` (`Windowed` after a limit or a cursor); `CursorOf<InstrumentInstrumentTypeQuery>` and `PageOf<InstrumentInstrumentTypeQuery>` are its cursor and page.
#[allow(dead_code)]
pub type InstrumentInstrumentTypeQuery<Window = ::sharded_runtime::reads::Whole> = ::sharded_runtime::ShardedQuery<
    Instrument,
    7763176507593944853u64,
    ::sharded_runtime::reads::InCollection,
    Window,
>;
///The query `Instrument::query().exchange_and_instrument_type(..)` (`Windowed` after a limit or a cursor); `CursorOf<InstrumentExchangeAndInstrumentTypeQuery>` and `PageOf<InstrumentExchangeAndInstrumentTypeQuery>` are its cursor and page.
#[allow(dead_code)]
pub type InstrumentExchangeAndInstrumentTypeQuery<
    Window = ::sharded_runtime::reads::Whole,
> = ::sharded_runtime::ShardedQuery<
    Instrument,
    367018182174805515u64,
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
    fn __check_price_currency(document: &Instrument) -> &String {
        &document.price.currency
    }
    const __SHARDED_INDEX_SEGMENTS_0: &[&str] = &[
        "price",
        ::sharded_runtime::__private::stored_name(
            ::sharded_runtime::__private::names_of(|document: &Instrument| {
                &document.price
            }),
            "currency",
        ),
    ];
    const __SHARDED_INDEX_PATH_0: &str = {
        const LEN: usize = ::sharded_runtime::__private::path_len(
            __SHARDED_INDEX_SEGMENTS_0,
        );
        const BYTES: [u8; LEN] = ::sharded_runtime::__private::path_bytes::<
            LEN,
        >(__SHARDED_INDEX_SEGMENTS_0);
        match ::core::str::from_utf8(&BYTES) {
            ::core::result::Result::Ok(path) => path,
            ::core::result::Result::Err(_) => ::core::panic!("field paths are UTF-8"),
        }
    };
    ///The typed queries of `Instrument`: one method per `#[sharded(index)]` path (and its `_in`), one per `index(...)` field set, and `_contains` and `_contains_any` per `#[sharded(contains)]` array (`all()` is on `Queries`, which dereferences to this).
    pub struct InstrumentQueries;
    impl InstrumentQueries {
        ///Documents whose `price.currency` equals `value`, by `timestamp` descending.
        #[inline]
        pub fn price_currency(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> InstrumentPriceCurrencyQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `price.currency` equals any of `values` (Firestore's `in`: 1 to 30 values), by `timestamp` descending; the same query type, cursors and index as `price_currency`.
        #[inline]
        pub fn price_currency_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> InstrumentPriceCurrencyQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        ///Documents whose `exchange` equals `value`, by `timestamp` descending.
        #[inline]
        pub fn exchange(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> InstrumentExchangeQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `exchange` equals any of `values` (Firestore's `in`: 1 to 30 values), by `timestamp` descending; the same query type, cursors and index as `exchange`.
        #[inline]
        pub fn exchange_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> InstrumentExchangeQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        ///Documents whose `instrument_type` equals `value`, by `timestamp` descending.
        #[inline]
        pub fn instrument_type(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> InstrumentInstrumentTypeQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `instrument_type` equals any of `values` (Firestore's `in`: 1 to 30 values), by `timestamp` descending; the same query type, cursors and index as `instrument_type`.
        #[inline]
        pub fn instrument_type_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> InstrumentInstrumentTypeQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        ///Documents whose `exchange` and `instrument_type` equal the values given, by `timestamp` descending.
        #[inline]
        pub fn exchange_and_instrument_type(
            &self,
            exchange: impl ::core::convert::Into<String>,
            instrument_type: impl ::core::convert::Into<String>,
        ) -> InstrumentExchangeAndInstrumentTypeQuery {
            ::sharded_runtime::ShardedQuery::__whole_collection()
                .__and::<String, _>(exchange)
                .__and::<String, _>(instrument_type)
        }
        #[doc(hidden)]
        pub fn symbol<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Instrument> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        pub fn symbol_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Instrument> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
    }
    ///The stored fields of `Instrument`, for `ShardedCollection::update_fields`.
    pub struct InstrumentFields {
        ///The stored field `symbol`.
        pub symbol: ::sharded_runtime::writes::Field<Instrument>,
        ///The stored field `price`.
        pub price: ::sharded_runtime::writes::Field<Instrument>,
        ///The stored field `exchange`.
        pub exchange: ::sharded_runtime::writes::Field<Instrument>,
        ///The stored field `instrumentType`.
        pub instrument_type: ::sharded_runtime::writes::Field<Instrument>,
        ///The stored field `timestamp`.
        pub timestamp: ::sharded_runtime::writes::Field<Instrument>,
    }
    ///The stored fields of `Instrument` typed by their Rust types, for `ShardedCollection::transform`.
    pub struct InstrumentTransforms {
        ///The stored field `symbol`, to transform.
        pub symbol: ::sharded_runtime::writes::TypedField<Instrument, String>,
        ///The stored field `price`, to transform.
        pub price: ::sharded_runtime::writes::TypedField<Instrument, Price>,
        ///The stored field `exchange`, to transform.
        pub exchange: ::sharded_runtime::writes::TypedField<Instrument, String>,
        ///The stored field `instrumentType`, to transform.
        pub instrument_type: ::sharded_runtime::writes::TypedField<Instrument, String>,
        ///The stored field `timestamp`, to transform.
        pub timestamp: ::sharded_runtime::writes::TypedField<
            Instrument,
            FirestoreTimestamp,
        >,
    }
    impl Instrument {
        ///The typed queries of this collection; see the methods of what it returns.
        #[inline]
        pub fn query() -> ::sharded_runtime::reads::Queries<Self> {
            ::sharded_runtime::__private::queries::<Instrument>(InstrumentQueries)
        }
        ///The stored fields of this collection, to name in a field-masked update.
        #[inline]
        pub fn fields() -> InstrumentFields {
            InstrumentFields {
                symbol: ::sharded_runtime::__private::field::<Instrument>("symbol"),
                price: ::sharded_runtime::__private::field::<Instrument>("price"),
                exchange: ::sharded_runtime::__private::field::<Instrument>("exchange"),
                instrument_type: ::sharded_runtime::__private::field::<
                    Instrument,
                >("instrumentType"),
                timestamp: ::sharded_runtime::__private::field::<Instrument>("timestamp"),
            }
        }
        ///The stored fields of this collection typed by their Rust types, to transform on the server.
        #[inline]
        pub fn transforms() -> InstrumentTransforms {
            InstrumentTransforms {
                symbol: ::sharded_runtime::__private::typed_field::<
                    Instrument,
                    String,
                >("symbol"),
                price: ::sharded_runtime::__private::typed_field::<
                    Instrument,
                    Price,
                >("price"),
                exchange: ::sharded_runtime::__private::typed_field::<
                    Instrument,
                    String,
                >("exchange"),
                instrument_type: ::sharded_runtime::__private::typed_field::<
                    Instrument,
                    String,
                >("instrumentType"),
                timestamp: ::sharded_runtime::__private::typed_field::<
                    Instrument,
                    FirestoreTimestamp,
                >("timestamp"),
            }
        }
    }
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredTopLevel for Instrument {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::TopLevel for Instrument {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::Derived for Instrument {}
    #[automatically_derived]
    impl ::sharded_runtime::Sharded for Instrument {
        const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<
            'static,
        > = ::sharded_runtime::__private::CollectionDescription {
            collection: "instruments",
            shard_field: "shard",
            shard_values: &["x", "y", "z"],
            order_field: "timestamp",
            direction: ::sharded_runtime::__private::Direction::Descending,
            order_type: ::sharded_runtime::__private::StoredType::Timestamp,
            fields: &[
                ::sharded_runtime::__private::StoredField {
                    path: "symbol",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "price",
                    stored_type: ::sharded_runtime::__private::StoredType::Other,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "exchange",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "instrumentType",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "timestamp",
                    stored_type: ::sharded_runtime::__private::StoredType::Timestamp,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
            ],
            indexed_fields: &[__SHARDED_INDEX_PATH_0, "exchange", "instrumentType"],
            field_sets: &[&["exchange", "instrumentType"]],
            ..::sharded_runtime::__private::CollectionDescription::EMPTY
        };
        const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
            query_names: &[
                "price_currency",
                "exchange",
                "instrument_type",
                "exchange_and_instrument_type",
            ],
            required_fields: &[
                "timestamp",
                __SHARDED_INDEX_PATH_0,
                "exchange",
                "instrumentType",
            ],
            required_segments: &[
                &["timestamp"],
                __SHARDED_INDEX_SEGMENTS_0,
                &["exchange"],
                &["instrumentType"],
            ],
            stored_fields: &[
                "symbol",
                "price",
                "exchange",
                "instrumentType",
                "timestamp",
            ],
        };
        type QueryMethods = InstrumentQueries;
        type AggregateFields = ::sharded_runtime::__private::NoFields;
        type RangeFields = ::sharded_runtime::__private::NoFields;
        type OrderValue = FirestoreTimestamp;
    }
};
