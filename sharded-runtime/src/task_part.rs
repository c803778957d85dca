//! Which part of a partitioned job a task runs, as the engine running it says: Cloud Run jobs
//! tell each task `CLOUD_RUN_TASK_INDEX`, `CLOUD_RUN_TASK_COUNT` and `CLOUD_RUN_TASK_ATTEMPT`;
//! a Kubernetes Indexed Job tells each pod `JOB_COMPLETION_INDEX`, and its manifest sets the
//! count (`SHARDED_TASK_COUNT`, the job's `completions`). A missing, malformed or
//! inconsistent value is a typed error before the task does anything.

use serde::{Deserialize, Serialize};

use crate::partition::{IdRange, MAX_PARTS};
use crate::{Error, Result};

/// Cloud Run jobs' task index (from 0), task count and attempt (from 0, a retry on a fresh
/// container counting up).
pub(crate) const CLOUD_RUN_TASK_INDEX: &str = "CLOUD_RUN_TASK_INDEX";
/// See `CLOUD_RUN_TASK_INDEX`.
pub(crate) const CLOUD_RUN_TASK_COUNT: &str = "CLOUD_RUN_TASK_COUNT";
/// See `CLOUD_RUN_TASK_INDEX`.
pub(crate) const CLOUD_RUN_TASK_ATTEMPT: &str = "CLOUD_RUN_TASK_ATTEMPT";
/// Cloud Run jobs' execution, the same for every task and attempt of one run of the job.
pub(crate) const CLOUD_RUN_EXECUTION: &str = "CLOUD_RUN_EXECUTION";
/// A Kubernetes Indexed Job's completion index (from 0), which it sets in every pod.
pub(crate) const JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";
/// A pod's name, which Kubernetes sets as its host name: `{job}-{index}-{suffix}` for a pod
/// of an Indexed Job, a new one for each pod it starts for an index.
pub(crate) const HOSTNAME: &str = "HOSTNAME";
/// The number of parts of a Kubernetes Indexed Job, which Kubernetes does not tell a pod: its
/// manifest sets it to the job's `completions`.
pub(crate) const SHARDED_TASK_COUNT: &str = "SHARDED_TASK_COUNT";

/// One task's part of a job split into `count` parts: part `index` (from 0), on its
/// `attempt` (from 0), run by `engine`. Its [`range`](Self::range) is the ids it covers; the
/// parts of one count cover every id exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TaskPart {
    /// Which part, from 0.
    pub index: u32,
    /// How many parts the job has.
    pub count: u32,
    /// Which attempt at the part this is, from 0 (Cloud Run counts retries; elsewhere 0).
    pub attempt: u32,
    /// What runs it, as far as it says: what tells a later attempt of the part, which takes
    /// it over at once, from a duplicate, which waits.
    pub engine: Engine,
}

/// What runs a task, as the engine names this attempt of it. An engine retries a failed task
/// only once its attempt has ended, so an attempt it names later than the one holding a part
/// holds it no more: the later one (the same Cloud Run execution's next attempt, another pod
/// of the same Indexed Job for the index) takes the part over at once, where any other waits
/// out the holder's lease.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// A task of a Cloud Run job's execution (`CLOUD_RUN_EXECUTION`), whose attempts
    /// (`CLOUD_RUN_TASK_ATTEMPT`) count up from 0.
    CloudRun {
        /// The execution's name.
        execution: String,
    },
    /// A pod of a Kubernetes Indexed Job (`HOSTNAME`): Kubernetes starts a new pod for an
    /// index after the last one failed.
    Kubernetes {
        /// The pod's name, `{job}-{index}-{suffix}`.
        pod: String,
    },
    /// Anything else: a task made by [`TaskPart::new`], or whose engine did not name it.
    Unknown,
}

/// Who holds a part or a job's closing step: the task's part, its attempt and its engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "StoredHolder", from = "StoredHolder")]
pub(crate) struct Holder {
    pub(crate) index: u32,
    pub(crate) attempt: u32,
    pub(crate) engine: Engine,
}

/// A [`Holder`] as a state document stores it: flat fields, which every Firestore client
/// reads (the firestore crate takes no enum variant with fields).
#[derive(Clone, Serialize, Deserialize)]
struct StoredHolder {
    index: u32,
    attempt: u32,
    /// `cloud_run`, `kubernetes` or `unknown`.
    engine: String,
    /// The Cloud Run execution's name, or the pod's.
    #[serde(default)]
    run: Option<String>,
}

impl From<Holder> for StoredHolder {
    fn from(holder: Holder) -> StoredHolder {
        let (engine, run) = match holder.engine {
            Engine::CloudRun { execution } => ("cloud_run", Some(execution)),
            Engine::Kubernetes { pod } => ("kubernetes", Some(pod)),
            Engine::Unknown => ("unknown", None),
        };
        StoredHolder {
            index: holder.index,
            attempt: holder.attempt,
            engine: engine.to_owned(),
            run,
        }
    }
}

impl From<StoredHolder> for Holder {
    fn from(stored: StoredHolder) -> Holder {
        let engine = match (stored.engine.as_str(), stored.run) {
            ("cloud_run", Some(execution)) => Engine::CloudRun { execution },
            ("kubernetes", Some(pod)) => Engine::Kubernetes { pod },
            // Written by another version, or by hand: no attempt can follow it.
            _ => Engine::Unknown,
        };
        Holder {
            index: stored.index,
            attempt: stored.attempt,
            engine,
        }
    }
}

impl TaskPart {
    /// Part `index` of `count`, first attempt. [`Error::InvalidOptions`] unless
    /// `index < count <=` [`MAX_PARTS`].
    pub fn new(index: u32, count: u32) -> Result<TaskPart> {
        if count == 0 || count > MAX_PARTS || index >= count {
            return Err(Error::InvalidOptions {
                option: "TaskPart",
                expected: "index < count <= MAX_PARTS (3,844)",
            });
        }
        Ok(TaskPart {
            index,
            count,
            attempt: 0,
            engine: Engine::Unknown,
        })
    }

    /// The same part as attempt `attempt` of the engine `engine`: what
    /// [`from_env`](Self::from_env) reads, for a task told its attempt another way.
    pub fn with_attempt(self, attempt: u32, engine: Engine) -> TaskPart {
        TaskPart {
            attempt,
            engine,
            ..self
        }
    }

    /// Whether this attempt comes after `holder`'s, as its engine tells: the same part of the
    /// same Cloud Run execution on a later attempt, or another pod of the same Kubernetes
    /// job for the same index. The engine starts it only once that attempt ended, so the part
    /// can be taken over at once, without waiting out the lease; the preconditions on every
    /// state write still stop a holder that was alive after all.
    pub(crate) fn supersedes(&self, holder: &Holder) -> bool {
        if holder.index != self.index {
            return false;
        }
        match (&self.engine, &holder.engine) {
            (Engine::CloudRun { execution }, Engine::CloudRun { execution: theirs }) => {
                execution == theirs && self.attempt > holder.attempt
            }
            (Engine::Kubernetes { pod }, Engine::Kubernetes { pod: theirs }) => {
                pod != theirs && pod_job(pod).is_some() && pod_job(pod) == pod_job(theirs)
            }
            _ => false,
        }
    }

    /// This attempt, as a part's or the closing step's holder.
    pub(crate) fn holder(&self) -> Holder {
        Holder {
            index: self.index,
            attempt: self.attempt,
            engine: self.engine.clone(),
        }
    }

    /// The part the engine running this process says it runs: Cloud Run jobs' variables, or
    /// a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` with `SHARDED_TASK_COUNT` from its
    /// manifest. [`Error::InvalidOptions`], naming the variable, when neither engine's index
    /// is set, a value is not a number, the count is missing, or the index is not below it.
    pub fn from_env() -> Result<TaskPart> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) with the variables `lookup` gives: what tests and other
    /// sources of the same names (a config file) call.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<TaskPart> {
        let cloud_run = lookup(CLOUD_RUN_TASK_INDEX);
        let kubernetes = lookup(JOB_COMPLETION_INDEX);
        let (index, count, attempt, engine) = match (cloud_run, kubernetes) {
            (Some(index), kubernetes) => {
                let index = number(CLOUD_RUN_TASK_INDEX, &index)?;
                if let Some(other) = kubernetes
                    && number(JOB_COMPLETION_INDEX, &other)? != index
                {
                    return Err(Error::InvalidOptions {
                        option: JOB_COMPLETION_INDEX,
                        expected: "the same index as CLOUD_RUN_TASK_INDEX when both are set",
                    });
                }
                let count = required(&lookup, CLOUD_RUN_TASK_COUNT)?;
                let attempt = match lookup(CLOUD_RUN_TASK_ATTEMPT) {
                    Some(attempt) => number(CLOUD_RUN_TASK_ATTEMPT, &attempt)?,
                    None => 0,
                };
                let engine = match lookup(CLOUD_RUN_EXECUTION) {
                    Some(execution) if !execution.is_empty() => Engine::CloudRun { execution },
                    _ => Engine::Unknown,
                };
                (index, count, attempt, engine)
            }
            (None, Some(index)) => {
                let index = number(JOB_COMPLETION_INDEX, &index)?;
                let engine = match lookup(HOSTNAME) {
                    Some(pod) if !pod.is_empty() => Engine::Kubernetes { pod },
                    _ => Engine::Unknown,
                };
                (index, required(&lookup, SHARDED_TASK_COUNT)?, 0, engine)
            }
            (None, None) => {
                return Err(Error::InvalidOptions {
                    option: "CLOUD_RUN_TASK_INDEX or JOB_COMPLETION_INDEX",
                    expected: "set by the engine running the task (a Cloud Run job, a Kubernetes Indexed Job); elsewhere, make the part with TaskPart::new",
                });
            }
        };
        Ok(TaskPart::new(index, count)?.with_attempt(attempt, engine))
    }

    /// The ids this part covers: [`IdRange::part`] of the index and count.
    pub fn range(&self) -> IdRange {
        IdRange::part(self.index, self.count).expect("a TaskPart is checked when made")
    }
}

/// The job of an Indexed Job's pod, from its name `{job}-{index}-{suffix}`; `None` for a name
/// of another form.
fn pod_job(pod: &str) -> Option<&str> {
    let (rest, suffix) = pod.rsplit_once('-')?;
    let (job, index) = rest.rsplit_once('-')?;
    let digits = !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit());
    (digits && !suffix.is_empty() && !job.is_empty()).then_some(job)
}

/// The variable `name`, which must be set, as a number.
fn required(lookup: &impl Fn(&str) -> Option<String>, name: &'static str) -> Result<u32> {
    match lookup(name) {
        Some(value) => number(name, &value),
        None => Err(Error::InvalidOptions {
            option: name,
            expected: "set to the number of tasks of the job",
        }),
    }
}

/// A variable's value as a decimal `u32`, digits only (no sign, no spaces).
fn number(name: &'static str, value: &str) -> Result<u32> {
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    match digits.then(|| value.parse::<u32>().ok()).flatten() {
        Some(number) => Ok(number),
        None => Err(Error::InvalidOptions {
            option: name,
            expected: "a whole number from 0, in decimal digits",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn refused(result: Result<TaskPart>) -> &'static str {
        match result {
            Err(Error::InvalidOptions { option, .. }) => option,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cloud_run_and_kubernetes_tell_the_part() {
        let part = TaskPart::from_vars(vars(&[
            (CLOUD_RUN_TASK_INDEX, "3"),
            (CLOUD_RUN_TASK_COUNT, "8"),
            (CLOUD_RUN_TASK_ATTEMPT, "2"),
        ]))
        .unwrap();
        assert_eq!((part.index, part.count, part.attempt), (3, 8, 2));
        assert_eq!(part.range(), IdRange::part(3, 8).unwrap());
        let part = TaskPart::from_vars(vars(&[
            (CLOUD_RUN_TASK_INDEX, "0"),
            (CLOUD_RUN_TASK_COUNT, "1"),
        ]))
        .unwrap();
        assert_eq!((part.index, part.count, part.attempt), (0, 1, 0));
        assert_eq!(part.range(), IdRange::all());
        let part = TaskPart::from_vars(vars(&[
            (JOB_COMPLETION_INDEX, "7"),
            (SHARDED_TASK_COUNT, "8"),
        ]))
        .unwrap();
        assert_eq!((part.index, part.count, part.attempt), (7, 8, 0));
        // Both engines' variables, agreeing.
        let both = vars(&[
            (CLOUD_RUN_TASK_INDEX, "1"),
            (CLOUD_RUN_TASK_COUNT, "4"),
            (JOB_COMPLETION_INDEX, "1"),
        ]);
        assert_eq!(TaskPart::from_vars(both).unwrap().index, 1);
    }

    #[test]
    fn missing_malformed_or_inconsistent_values_are_typed_errors() {
        assert_eq!(
            refused(TaskPart::from_vars(vars(&[]))),
            "CLOUD_RUN_TASK_INDEX or JOB_COMPLETION_INDEX"
        );
        assert_eq!(
            refused(TaskPart::from_vars(vars(&[(CLOUD_RUN_TASK_INDEX, "1")]))),
            CLOUD_RUN_TASK_COUNT
        );
        assert_eq!(
            refused(TaskPart::from_vars(vars(&[(JOB_COMPLETION_INDEX, "1")]))),
            SHARDED_TASK_COUNT
        );
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1 ",
            "one",
            "1.0",
            "4294967296",
            "0x10",
        ] {
            let result = TaskPart::from_vars(vars(&[
                (CLOUD_RUN_TASK_INDEX, bad),
                (CLOUD_RUN_TASK_COUNT, "4"),
            ]));
            assert_eq!(refused(result), CLOUD_RUN_TASK_INDEX, "{bad:?}");
            let result = TaskPart::from_vars(vars(&[
                (JOB_COMPLETION_INDEX, "0"),
                (SHARDED_TASK_COUNT, bad),
            ]));
            assert_eq!(refused(result), SHARDED_TASK_COUNT, "{bad:?}");
        }
        let attempt = TaskPart::from_vars(vars(&[
            (CLOUD_RUN_TASK_INDEX, "0"),
            (CLOUD_RUN_TASK_COUNT, "4"),
            (CLOUD_RUN_TASK_ATTEMPT, "x"),
        ]));
        assert_eq!(refused(attempt), CLOUD_RUN_TASK_ATTEMPT);
        for (index, count) in [("4", "4"), ("0", "0"), ("0", "3845"), ("9", "2")] {
            let result = TaskPart::from_vars(vars(&[
                (CLOUD_RUN_TASK_INDEX, index),
                (CLOUD_RUN_TASK_COUNT, count),
            ]));
            assert_eq!(refused(result), "TaskPart", "{index} of {count}");
        }
        let disagreeing = TaskPart::from_vars(vars(&[
            (CLOUD_RUN_TASK_INDEX, "1"),
            (CLOUD_RUN_TASK_COUNT, "4"),
            (JOB_COMPLETION_INDEX, "2"),
        ]));
        assert_eq!(refused(disagreeing), JOB_COMPLETION_INDEX);
    }

    #[test]
    fn a_later_attempt_of_the_same_part_supersedes_and_nothing_else_does() {
        let cloud_run = |execution: &str, index: u32, attempt: u32| {
            TaskPart::from_vars(vars(&[
                (CLOUD_RUN_TASK_INDEX, &index.to_string()),
                (CLOUD_RUN_TASK_COUNT, "4"),
                (CLOUD_RUN_TASK_ATTEMPT, &attempt.to_string()),
                (CLOUD_RUN_EXECUTION, execution),
            ]))
            .unwrap()
        };
        let holder = cloud_run("adopt-x7k2p", 1, 3).holder();
        assert!(cloud_run("adopt-x7k2p", 1, 4).supersedes(&holder));
        assert!(cloud_run("adopt-x7k2p", 1, 9).supersedes(&holder));
        // The same attempt (a duplicate), an earlier one, another part, another execution.
        assert!(!cloud_run("adopt-x7k2p", 1, 3).supersedes(&holder));
        assert!(!cloud_run("adopt-x7k2p", 1, 2).supersedes(&holder));
        assert!(!cloud_run("adopt-x7k2p", 2, 4).supersedes(&holder));
        assert!(!cloud_run("adopt-q1w2e", 1, 4).supersedes(&holder));
        let pod = |name: &str, index: u32| {
            TaskPart::from_vars(vars(&[
                (JOB_COMPLETION_INDEX, &index.to_string()),
                (SHARDED_TASK_COUNT, "8"),
                (HOSTNAME, name),
            ]))
            .unwrap()
        };
        let holder = pod("adopt-instruments-3-abcde", 3).holder();
        assert!(pod("adopt-instruments-3-fghij", 3).supersedes(&holder));
        assert!(!pod("adopt-instruments-3-abcde", 3).supersedes(&holder));
        assert!(!pod("other-job-3-fghij", 3).supersedes(&holder));
        assert!(!pod("adopt-instruments-4-fghij", 4).supersedes(&holder));
        assert!(!pod("not-a-pod", 3).supersedes(&holder));
        // Engines that do not say, or say differently, never supersede.
        assert!(!TaskPart::new(3, 8).unwrap().supersedes(&holder));
        assert!(!cloud_run("adopt-x7k2p", 3, 4).supersedes(&holder));
        let unknown = TaskPart::new(1, 4).unwrap();
        assert!(
            !unknown
                .clone()
                .with_attempt(5, Engine::Unknown)
                .supersedes(&unknown.holder())
        );
        // Without the execution's name or the pod's, the engine is unknown.
        let bare = TaskPart::from_vars(vars(&[
            (CLOUD_RUN_TASK_INDEX, "1"),
            (CLOUD_RUN_TASK_COUNT, "4"),
            (CLOUD_RUN_TASK_ATTEMPT, "2"),
        ]))
        .unwrap();
        assert_eq!(bare.engine, Engine::Unknown);
    }

    /// The parts of one count, from every index, cover each id exactly once.
    #[test]
    fn the_parts_of_a_count_cover_every_id_once() {
        let ids = [
            "0", "00", "0zzz", "9", "A", "Azz", "Z", "a", "m", "zz", "zzzz", "~", "é",
        ];
        for count in [1, 2, 3, 7, 62, 100, MAX_PARTS] {
            for id in ids {
                let covering = (0..count)
                    .filter(|&index| TaskPart::new(index, count).unwrap().range().contains(id))
                    .count();
                assert_eq!(covering, 1, "{id} in {count} parts");
            }
        }
    }
}
