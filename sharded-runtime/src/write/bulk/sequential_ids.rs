//! Notices a run of increasing document ids: the best-practices page's first hotspot rule.

/// How many increasing ids in a row count as sequential. Random ids (Firestore's own) rise
/// `RUN` times in a row with probability 1/RUN!, so a run this long is not chance.
pub(crate) const RUN: u32 = 32;

/// The ids a writer creates, as far as the warning needs them.
#[derive(Debug, Default)]
pub(crate) struct SequentialIds {
    last: Option<String>,
    first_of_run: Option<String>,
    run: u32,
    warned: bool,
}

impl SequentialIds {
    /// Notes `id`; the first time the ids have risen [`RUN`] times in a row, returns the run
    /// (`first … last`) to warn about.
    pub(crate) fn note(&mut self, id: &str) -> Option<String> {
        if self.warned {
            return None;
        }
        match &self.last {
            Some(last) if id.as_bytes() > last.as_bytes() => self.run += 1,
            _ => {
                self.run = 0;
                self.first_of_run = Some(id.to_owned());
            }
        }
        self.last = Some(id.to_owned());
        if self.run + 1 >= RUN {
            self.warned = true;
            return Some(format!(
                "`{}` … `{id}`",
                self.first_of_run.as_deref().unwrap_or_default()
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_on_a_rising_run_and_never_on_random_ids() {
        let mut ids = SequentialIds::default();
        let warnings: Vec<String> = (1..=100)
            .filter_map(|n| ids.note(&format!("gen-{n:04}")))
            .collect();
        assert_eq!(warnings, ["`gen-0001` … `gen-0032`"]);

        let mut ids = SequentialIds::default();
        for _ in 0..100_000 {
            let id = crate::model::document_id::generate_document_id();
            assert_eq!(ids.note(&id), None);
        }

        // Timestamps as ids rise too.
        let mut ids = SequentialIds::default();
        let warned = (0..40).any(|s| ids.note(&format!("2026-11-22T19:{s:02}:00Z")).is_some());
        assert!(warned);
    }
}
