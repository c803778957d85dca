//! Guides, one page per capability: what to write, what Firestore is sent, and what is
//! checked. Every example compiles (each is a doctest).

// A `build.rs` example is its `fn main`.
#![allow(clippy::needless_doctest_main)]

#[doc = include_str!("../guide/queries.md")]
pub mod queries {}

#[doc = include_str!("../guide/aggregates.md")]
pub mod aggregates {}

#[doc = include_str!("../guide/live.md")]
pub mod live {}

#[doc = include_str!("../guide/subcollections.md")]
pub mod subcollections {}

#[doc = include_str!("../guide/writes.md")]
pub mod writes {}

#[doc = include_str!("../guide/counters.md")]
pub mod counters {}

#[cfg(feature = "jobs")]
#[doc = include_str!("../guide/adoption.md")]
pub mod adoption {}

#[doc = include_str!("../guide/indexes.md")]
pub mod indexes {}

#[doc = include_str!("../guide/testing.md")]
pub mod testing {}

#[doc = include_str!("../guide/new_application.md")]
pub mod new_application {}
