//! A chat whose messages live under their rooms (`rooms/{room}/messages`), sharded and stamped
//! by the server: a room's history paged forward and back, the newest messages across every
//! room (a collection group), a user's mentions (`array-contains`), a live feed, and a
//! transaction that posts a message and bumps its room's count together.
//!
//! `cargo run -p sharded-examples --bin chat` starts the Cloud Firestore emulator on a free
//! port (or uses `FIRESTORE_EMULATOR_HOST`) and stops it on exit.

use std::error::Error;
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use sharded_emulator::emulator::Emulator;
use sharded_examples::Message;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Parent, Sharded,
    writes::{TransactionError, transaction_error},
};

type BoxError = Box<dyn Error + Send + Sync>;

/// A room document, plain (not sharded): its message count.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Room {
    messages: i64,
}

/// Posts `text` in `room` and bumps the room's count, both or neither.
async fn post(db: &FirestoreDb, room: &str, author: &str, text: &str) -> Result<i64, BoxError> {
    let (room, author, text) = (room.to_owned(), author.to_owned(), text.to_owned());
    let count = db
        .run_transaction(move |db, transaction| {
            let (room, author, text) = (room.clone(), author.clone(), text.clone());
            async move {
                let counted: Option<Room> = db
                    .fluent()
                    .select()
                    .by_id_in("rooms")
                    .obj()
                    .one(&room)
                    .await
                    .map_err(|error| transaction_error(error.into()))?;
                let count = counted.unwrap_or_default().messages + 1;
                db.fluent()
                    .update()
                    .in_col("rooms")
                    .document_id(&room)
                    .object(&Room { messages: count })
                    .add_to_transaction(transaction)
                    .map_err(|error| transaction_error(error.into()))?;
                let parent = Parent::<Message>::new(&[&room]).map_err(transaction_error)?;
                let message = Message::new(&author, &text);
                Message::collection_in(&db, &parent)
                    .in_transaction(transaction)
                    .insert(&format!("m{count:04}"), &message)
                    .map_err(transaction_error)?;
                Ok::<_, TransactionError>(count)
            }
            .boxed()
        })
        .await?;
    Ok(count)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    println!("starting the Firestore emulator…");
    let emulator = Emulator::start().await?;
    let db = emulator.db("sharded-chat").await?;

    for (room, author, text) in [
        ("lobby", "ann", "hello"),
        ("lobby", "bob", "hi @ann"),
        ("lobby", "cid", "morning all"),
        ("lobby", "ann", "@bob @cid standup in 5"),
        ("lobby", "bob", "on my way"),
        ("rust", "ann", "anyone tried sharded?"),
        ("rust", "cid", "yes @ann, the group feed is neat"),
        ("random", "bob", "lunch?"),
    ] {
        let count = post(&db, room, author, text).await?;
        println!("posted in {room}: message {count}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let lobby = Parent::<Message>::new(&["lobby"])?;
    println!("\nthe lobby, newest first:");
    for message in Message::query().all().in_parent(&lobby).fetch(&db).await? {
        println!("  {}: {}", message.author, message.text);
    }

    println!("\nthe lobby two at a time: forward to the end, then one page back:");
    let history = Message::query().all().in_parent(&lobby);
    let mut page = history.page(&db, 2).await?;
    let mut pages = vec![page.items.len()];
    while let Some(next) = page.next.clone() {
        page = history.clone().after(next).page(&db, 2).await?;
        pages.push(page.items.len());
    }
    println!("  pages of {pages:?}");
    if let Some(previous) = page.previous.clone() {
        let back = history.clone().before(previous).page(&db, 2).await?;
        for stored in &back.items {
            let at = stored.document.sent_at.0;
            println!(
                "  back: {} at {at}: {}",
                stored.document.author, stored.document.text
            );
        }
    }

    println!("\nmessages mentioning ann, in every room:");
    for stored in Message::query()
        .mentions_contains("ann")
        .in_group()
        .fetch_stored(&db)
        .await?
    {
        let room = stored.parent.as_deref().unwrap_or("?");
        println!(
            "  {room}: {}: {}",
            stored.document.author, stored.document.text
        );
    }

    println!("\nthe newest 3 across every room (a collection group):");
    for stored in Message::query()
        .all()
        .in_group()
        .limit(3)
        .fetch_stored(&db)
        .await?
    {
        let room = stored.parent.as_deref().unwrap_or("?");
        println!(
            "  {room}: {}: {}",
            stored.document.author, stored.document.text
        );
    }
    println!(
        "ann's messages in every room: {}",
        Message::query().author("ann").in_group().count(&db).await?
    );

    println!("\nlistening to the newest 3 across every room; posting two more…");
    let mut feed = Message::query().all().in_group().limit(3).listen(&db)?;
    let poster = {
        let db = db.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            post(&db, "random", "cid", "pizza").await?;
            post(&db, "lobby", "ann", "bye").await?;
            Ok::<(), BoxError>(())
        })
    };
    for _ in 0..3 {
        let Some(snapshot) = feed.next().await else {
            break;
        };
        let snapshot = snapshot?;
        let shown: Vec<String> = snapshot
            .documents
            .iter()
            .map(|stored| {
                let room = stored.parent.as_deref().unwrap_or("?");
                format!("{room}: {}", stored.document.text)
            })
            .collect();
        println!("  snapshot: {shown:?}");
        if snapshot
            .documents
            .iter()
            .any(|stored| stored.document.text == "bye")
        {
            break;
        }
    }
    poster.await?.map_err(|error| error.to_string())?;
    Ok(())
}
