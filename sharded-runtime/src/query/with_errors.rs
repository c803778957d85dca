//! Reads that report a document that does not decode beside the ones that do: for collections
//! other clients also write (a Cloud Function, a web client), where one document written
//! differently would otherwise fail the whole read and hide every other document. The strict
//! reads stay as they are.

use firestore::FirestoreDb;
use futures::stream::{BoxStream, StreamExt};

use super::stream::STREAM_PAGE;
use super::{Page, Reach, ShardedQuery, Window};
use crate::stored::{Decoded, Undecodable};
use crate::{Result, Sharded, Stored};

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// [`fetch_stored`](Self::fetch_stored), with each document that does not read as `T`
    /// reported in its place ([`Undecodable`]: its name and why) instead of failing the
    /// fetch. Every other failure (a chunk query's error) still fails it.
    pub async fn fetch_with_errors(&self, db: &FirestoreDb) -> Result<Vec<Decoded<T>>> {
        let (documents, _) = self.fetch_documents(db).await?;
        Ok(documents.iter().map(Stored::decode).collect())
    }

    /// [`stream`](Self::stream), with each document that does not read as `T` an
    /// `Ok(Err(Undecodable))` item in its place; an error of the stream itself is an `Err`
    /// item, its last.
    pub async fn stream_with_errors(
        &self,
        db: &FirestoreDb,
    ) -> Result<BoxStream<'static, Result<Decoded<T>>>> {
        let documents = self.stream_documents(db, STREAM_PAGE).await?;
        Ok(documents
            .map(|document| document.map(|document| Stored::decode(&document)))
            .boxed())
    }

    /// [`page`](Self::page), with the page's documents that do not read as `T` apart: the
    /// page holds the ones that do, in order, and its cursors are where they would be had
    /// every document read (so paging on skips none and repeats none).
    pub async fn page_with_errors(
        &self,
        db: &FirestoreDb,
        limit: u32,
    ) -> Result<(Page<T, QUERY, R>, Vec<Undecodable>)> {
        let page = self.page_documents(db, limit).await?;
        let (mut items, mut undecodable) = (Vec::new(), Vec::new());
        for decoded in page.documents.iter().map(Stored::decode) {
            match decoded {
                Ok(stored) => items.push(stored),
                Err(error) => undecodable.push(error),
            }
        }
        let page = Page {
            items,
            next: page.next,
            previous: page.previous,
            stats: page.stats,
        };
        Ok((page, undecodable))
    }
}
