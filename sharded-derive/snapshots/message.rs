///The query `Message::query().author(..)`, `<InGroup>` after `.in_group()` (`Windowed` after a limit or a cursor); `CursorOf<MessageAuthorQuery>` and `PageOf<MessageAuthorQuery>` are its cursor and page.
#[allow(dead_code)]
pub type MessageAuthorQuery<
    Reach = ::sharded_runtime::reads::InCollection,
    Window = ::sharded_runtime::reads::Whole,
> = ::sharded_runtime::ShardedQuery<Message, 7815024061042257814u64, Reach, Window>;
///The query `Message::query().author(..).reversed()`, read the other way, `<InGroup>` after `.in_group()`; `CursorOf<MessageAuthorQueryReversed>` and `PageOf<MessageAuthorQueryReversed>` are its cursor and page.
#[allow(dead_code)]
pub type MessageAuthorQueryReversed<
    Reach = ::sharded_runtime::reads::InCollection,
    Window = ::sharded_runtime::reads::Whole,
> = ::sharded_runtime::ShardedQuery<
    Message,
    7815024061042257814u64,
    ::sharded_runtime::reads::Reversed<Reach>,
    Window,
>;
///The query `Message::query().mentions_contains(..)`, `<InGroup>` after `.in_group()` (`Windowed` after a limit or a cursor); `CursorOf<MessageMentionsContainsQuery>` and `PageOf<MessageMentionsContainsQuery>` are its cursor and page.
#[allow(dead_code)]
pub type MessageMentionsContainsQuery<
    Reach = ::sharded_runtime::reads::InCollection,
    Window = ::sharded_runtime::reads::Whole,
> = ::sharded_runtime::ShardedQuery<Message, 4012311589271838766u64, Reach, Window>;
///The query `Message::query().mentions_contains(..).reversed()`, read the other way, `<InGroup>` after `.in_group()`; `CursorOf<MessageMentionsContainsQueryReversed>` and `PageOf<MessageMentionsContainsQueryReversed>` are its cursor and page.
#[allow(dead_code)]
pub type MessageMentionsContainsQueryReversed<
    Reach = ::sharded_runtime::reads::InCollection,
    Window = ::sharded_runtime::reads::Whole,
> = ::sharded_runtime::ShardedQuery<
    Message,
    4012311589271838766u64,
    ::sharded_runtime::reads::Reversed<Reach>,
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
    fn __server_timestamp<T: ::sharded_runtime::__private::ServerTimestamp>() {}
    const _: fn() = __server_timestamp::<FirestoreTimestamp>;
    ///The typed queries of `Message`: one method per `#[sharded(index)]` path (and its `_in`), one per `index(...)` field set, and `_contains` and `_contains_any` per `#[sharded(contains)]` array (`all()` is on `Queries`, which dereferences to this).
    pub struct MessageQueries;
    impl MessageQueries {
        ///Documents whose `author` equals `value`, by `sentAt` descending.
        #[inline]
        pub fn author(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> MessageAuthorQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose `author` equals any of `values` (Firestore's `in`: 1 to 30 values), by `sentAt` descending; the same query type, cursors and index as `author`.
        #[inline]
        pub fn author_in(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> MessageAuthorQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        ///Documents whose array `mentions` holds `value` (Firestore's `array-contains`), by `sentAt` descending.
        #[inline]
        pub fn mentions_contains(
            &self,
            value: impl ::core::convert::Into<String>,
        ) -> MessageMentionsContainsQuery {
            ::sharded_runtime::ShardedQuery::__eq::<String, _>(value)
        }
        ///Documents whose array `mentions` holds any of `values` (Firestore's `array-contains-any`: 1 to 30 values), each once, by `sentAt` descending; the same query type and cursors as `mentions_contains`.
        #[inline]
        pub fn mentions_contains_any(
            &self,
            values: impl ::core::iter::IntoIterator<
                Item = impl ::core::convert::Into<String>,
            >,
        ) -> MessageMentionsContainsQuery {
            ::sharded_runtime::ShardedQuery::__in::<String, _>(values)
        }
        #[doc(hidden)]
        pub fn text<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Message> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
        #[doc(hidden)]
        pub fn text_in<V: ::sharded_runtime::__private::Indexed>(
            &self,
            value: V,
        ) -> ::sharded_runtime::WholeCollection<Message> {
            match ::sharded_runtime::__private::Indexed::not_indexed(value) {}
        }
    }
    ///The stored fields of `Message`, for `ShardedCollection::update_fields`.
    pub struct MessageFields {
        ///The stored field `author`.
        pub author: ::sharded_runtime::writes::Field<Message>,
        ///The stored field `text`.
        pub text: ::sharded_runtime::writes::Field<Message>,
        ///The stored field `mentions`.
        pub mentions: ::sharded_runtime::writes::Field<Message>,
        ///The stored field `sentAt`.
        pub sent_at: ::sharded_runtime::writes::Field<Message>,
    }
    ///The stored fields of `Message` typed by their Rust types, for `ShardedCollection::transform`.
    pub struct MessageTransforms {
        ///The stored field `author`, to transform.
        pub author: ::sharded_runtime::writes::TypedField<Message, String>,
        ///The stored field `text`, to transform.
        pub text: ::sharded_runtime::writes::TypedField<Message, String>,
        ///The stored field `mentions`, to transform.
        pub mentions: ::sharded_runtime::writes::TypedField<Message, Vec<String>>,
        ///The stored field `sentAt`, to transform.
        pub sent_at: ::sharded_runtime::writes::TypedField<Message, FirestoreTimestamp>,
    }
    impl Message {
        ///The typed queries of this collection; see the methods of what it returns.
        #[inline]
        pub fn query() -> ::sharded_runtime::reads::Queries<Self> {
            ::sharded_runtime::__private::queries::<Message>(MessageQueries)
        }
        ///The stored fields of this collection, to name in a field-masked update.
        #[inline]
        pub fn fields() -> MessageFields {
            MessageFields {
                author: ::sharded_runtime::__private::field::<Message>("author"),
                text: ::sharded_runtime::__private::field::<Message>("text"),
                mentions: ::sharded_runtime::__private::field::<Message>("mentions"),
                sent_at: ::sharded_runtime::__private::field::<Message>("sentAt"),
            }
        }
        ///The stored fields of this collection typed by their Rust types, to transform on the server.
        #[inline]
        pub fn transforms() -> MessageTransforms {
            MessageTransforms {
                author: ::sharded_runtime::__private::typed_field::<
                    Message,
                    String,
                >("author"),
                text: ::sharded_runtime::__private::typed_field::<
                    Message,
                    String,
                >("text"),
                mentions: ::sharded_runtime::__private::typed_field::<
                    Message,
                    Vec<String>,
                >("mentions"),
                sent_at: ::sharded_runtime::__private::typed_field::<
                    Message,
                    FirestoreTimestamp,
                >("sentAt"),
            }
        }
    }
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredSubcollection for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::Subcollection for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredParentDepth<1usize> for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::ParentDepth<1usize> for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredCollectionGroup for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::CollectionGroup for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::DeclaredReversible for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::bounds::Reversible for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::__private::Derived for Message {}
    #[automatically_derived]
    impl ::sharded_runtime::Sharded for Message {
        const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<
            'static,
        > = ::sharded_runtime::__private::CollectionDescription {
            collection: "messages",
            shard_field: "shard",
            shard_values: ::sharded_runtime::__private::numbered_shards(3usize),
            order_field: "sentAt",
            direction: ::sharded_runtime::__private::Direction::Descending,
            parent_collections: &["rooms"],
            collection_group: true,
            reversible: true,
            server_timestamp: true,
            order_type: ::sharded_runtime::__private::StoredType::Timestamp,
            fields: &[
                ::sharded_runtime::__private::StoredField {
                    path: "author",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "text",
                    stored_type: ::sharded_runtime::__private::StoredType::String,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "mentions",
                    stored_type: ::sharded_runtime::__private::StoredType::List,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
                ::sharded_runtime::__private::StoredField {
                    path: "sentAt",
                    stored_type: ::sharded_runtime::__private::StoredType::Timestamp,
                    required: true,
                    integer_range: ::core::option::Option::None,
                },
            ],
            indexed_fields: &["author"],
            array_fields: &["mentions"],
            ..::sharded_runtime::__private::CollectionDescription::EMPTY
        };
        const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
            query_names: &["author", "mentions_contains"],
            required_fields: &["author"],
            required_segments: ::sharded_runtime::__private::PLAIN_PATHS,
            stored_fields: &["author", "text", "mentions", "sentAt"],
        };
        type QueryMethods = MessageQueries;
        type AggregateFields = ::sharded_runtime::__private::NoFields;
        type RangeFields = ::sharded_runtime::__private::NoFields;
        type OrderValue = FirestoreTimestamp;
    }
};
