//! The streams a listener or a folder is read through: its `next` called as the stream is
//! polled, until it has no more or fails. An error is the stream's last item, and the
//! source (its open Listen stream) is dropped with it, so a failed stream holds nothing.

use std::future::Future;

use futures::stream::{BoxStream, StreamExt as _};

use crate::error::Result;

/// What a stream of [`until_error`] is read from.
pub(crate) trait Source: Send + 'static {
    type Item: Send + 'static;

    /// The next item; `None` when there are no more.
    fn next_item(&mut self) -> impl Future<Output = Option<Result<Self::Item>>> + Send;
}

/// `source`'s items, as a stream that ends after the first error.
pub(crate) fn until_error<S: Source>(source: S) -> BoxStream<'static, Result<S::Item>> {
    futures::stream::unfold(Some(source), |source| async move {
        let mut source = source?;
        match source.next_item().await? {
            Ok(item) => Some((Ok(item), Some(source))),
            Err(err) => Some((Err(err), None)),
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// Yields its items in order; `Err` items as `Error::InvalidQuery`.
    struct Items(std::vec::IntoIter<std::result::Result<u32, &'static str>>);

    impl Source for Items {
        type Item = u32;

        async fn next_item(&mut self) -> Option<Result<u32>> {
            self.0
                .next()
                .map(|item| item.map_err(|e| Error::InvalidQuery(e.into())))
        }
    }

    fn read(items: Vec<std::result::Result<u32, &'static str>>) -> Vec<String> {
        let stream = until_error(Items(items.into_iter()));
        futures::executor::block_on(stream.collect::<Vec<_>>())
            .into_iter()
            .map(|item| match item {
                Ok(n) => n.to_string(),
                Err(err) => format!("error: {err}"),
            })
            .collect()
    }

    #[test]
    fn an_error_is_the_last_item() {
        let read = read(vec![Ok(1), Err("broken"), Ok(3)]);
        assert_eq!(read.len(), 2, "{read:?}");
        assert_eq!(read[0], "1");
        assert!(
            read[1].starts_with("error: ") && read[1].contains("broken"),
            "{read:?}"
        );
    }

    #[test]
    fn a_source_with_no_more_ends_the_stream() {
        assert_eq!(read(vec![Ok(1), Ok(2)]), ["1", "2"]);
        assert!(read(vec![]).is_empty());
    }
}
