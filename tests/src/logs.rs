//! What the code under test logs, captured from `tracing` at DEBUG on this thread (and so
//! from the tasks of a current-thread runtime) while a [`Captured`] lives.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::format::FmtSpan;

/// The log lines written while it lives.
pub struct Captured {
    bytes: Arc<Mutex<Vec<u8>>>,
    _default: tracing::subscriber::DefaultGuard,
}

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Captures events.
    pub fn events() -> Captured {
        Captured::with(FmtSpan::NONE)
    }

    /// Captures events and a line for each span as it closes.
    pub fn events_and_span_closes() -> Captured {
        Captured::with(FmtSpan::CLOSE)
    }

    fn with(spans: FmtSpan) -> Captured {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(bytes.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_max_level(tracing::Level::DEBUG)
            .with_span_events(spans)
            .with_ansi(false)
            .finish();
        Captured {
            bytes,
            _default: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().unwrap()).into_owned()
    }
}
