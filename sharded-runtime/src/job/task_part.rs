//! Which part of a partitioned job a task runs, as the engine running it says: Cloud Run jobs
//! tell each task `CLOUD_RUN_TASK_INDEX`, `CLOUD_RUN_TASK_COUNT` and `CLOUD_RUN_TASK_ATTEMPT`;
//! a Kubernetes Indexed Job tells each pod `JOB_COMPLETION_INDEX`, and its manifest sets the
//! count (`SHARDED_TASK_COUNT`, the job's `completions`) and, through the downward API, the
//! Job's name and uid and the pod's own name, which tell a replacement pod of the same Job
//! from any other. A missing, malformed or inconsistent value is a typed error before the
//! task does anything.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::partition::{IdRange, MAX_PARTS};

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
/// The Job's name, which the manifest passes through the downward API
/// (`fieldRef: metadata.labels['batch.kubernetes.io/job-name']`). Not `HOSTNAME`: the Job
/// controller names every pod's host `{job}-{index}`, the same for each pod of an index, and
/// `adopt-1-3` could be job `adopt-1`'s index 3 or a job `adopt-1-3`'s.
pub(crate) const SHARDED_JOB_NAME: &str = "SHARDED_JOB_NAME";
/// The Job's uid (`fieldRef: metadata.labels['batch.kubernetes.io/controller-uid']`), which
/// tells a Job deleted and created again under the same name from the first. Optional.
pub(crate) const SHARDED_JOB_UID: &str = "SHARDED_JOB_UID";
/// The pod's own name (`fieldRef: metadata.name`): each pod the Job starts for an index has
/// its own.
pub(crate) const SHARDED_POD_NAME: &str = "SHARDED_POD_NAME";
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
    /// A pod of a Kubernetes Indexed Job (`SHARDED_JOB_NAME`, `SHARDED_POD_NAME` and, where
    /// the manifest passes it, `SHARDED_JOB_UID`): Kubernetes starts a new pod for an index
    /// after the last one failed.
    Kubernetes {
        /// The Job's name.
        job: String,
        /// The Job's uid, where the manifest passes it.
        job_uid: Option<String>,
        /// The pod's name.
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
    /// A pod's Job's name (a holder written before it was stored has none, and is no pod any
    /// attempt can follow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    job: Option<String>,
    /// A pod's Job's uid, where its manifest passes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    job_uid: Option<String>,
}

impl From<Holder> for StoredHolder {
    fn from(holder: Holder) -> StoredHolder {
        let (engine, run, job, job_uid) = match holder.engine {
            Engine::CloudRun { execution } => ("cloud_run", Some(execution), None, None),
            Engine::Kubernetes { job, job_uid, pod } => {
                ("kubernetes", Some(pod), Some(job), job_uid)
            }
            Engine::Unknown => ("unknown", None, None, None),
        };
        StoredHolder {
            index: holder.index,
            attempt: holder.attempt,
            engine: engine.to_owned(),
            run,
            job,
            job_uid,
        }
    }
}

impl From<StoredHolder> for Holder {
    fn from(stored: StoredHolder) -> Holder {
        let engine = match (stored.engine.as_str(), stored.run, stored.job) {
            ("cloud_run", Some(execution), _) => Engine::CloudRun { execution },
            ("kubernetes", Some(pod), Some(job)) => Engine::Kubernetes {
                job,
                job_uid: stored.job_uid,
                pod,
            },
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
    /// Job (its name, and its uid where both say) for the same index. The engine starts it
    /// only once that attempt ended, so the part can be taken over at once, without waiting
    /// out the lease; the preconditions on every state write still stop a holder that was
    /// alive after all (Kubernetes may start a replacement pod while the old one is still
    /// terminating). A pod of another Job never supersedes, whatever the names look like.
    pub(crate) fn supersedes(&self, holder: &Holder) -> bool {
        if holder.index != self.index {
            return false;
        }
        match (&self.engine, &holder.engine) {
            (Engine::CloudRun { execution }, Engine::CloudRun { execution: theirs }) => {
                execution == theirs && self.attempt > holder.attempt
            }
            (
                Engine::Kubernetes { job, job_uid, pod },
                Engine::Kubernetes {
                    job: their_job,
                    job_uid: their_uid,
                    pod: their_pod,
                },
            ) => job == their_job && job_uid == their_uid && pod != their_pod,
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
    /// manifest, and the pod's identity where the manifest passes it through the downward API
    /// (`SHARDED_JOB_NAME`, `SHARDED_POD_NAME`, optionally `SHARDED_JOB_UID`; see
    /// `examples/deploy/indexed-job.json`). [`Error::InvalidOptions`], naming the variable,
    /// when neither engine's index is set, a value is not a number, the count is missing,
    /// the index is not below it, or only one of the Job's and the pod's names is set.
    /// Without both, the engine is [`Engine::Unknown`]: a replacement pod then waits out the
    /// lease of the pod it replaces.
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
                let named = |name: &str| lookup(name).filter(|value| !value.is_empty());
                let engine = match (named(SHARDED_JOB_NAME), named(SHARDED_POD_NAME)) {
                    (Some(job), Some(pod)) => Engine::Kubernetes {
                        job,
                        job_uid: named(SHARDED_JOB_UID),
                        pod,
                    },
                    (None, None) => Engine::Unknown,
                    (Some(_), None) => {
                        return Err(Error::InvalidOptions {
                            option: SHARDED_POD_NAME,
                            expected: "the pod's own name (fieldRef: metadata.name) beside SHARDED_JOB_NAME",
                        });
                    }
                    (None, Some(_)) => {
                        return Err(Error::InvalidOptions {
                            option: SHARDED_JOB_NAME,
                            expected: "the Job's name (fieldRef: metadata.labels['batch.kubernetes.io/job-name']) beside SHARDED_POD_NAME",
                        });
                    }
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
        // One of the Job's and the pod's names without the other.
        let half = |name: &'static str| {
            TaskPart::from_vars(vars(&[
                (JOB_COMPLETION_INDEX, "0"),
                (SHARDED_TASK_COUNT, "2"),
                (name, "x"),
            ]))
        };
        assert_eq!(refused(half(SHARDED_JOB_NAME)), SHARDED_POD_NAME);
        assert_eq!(refused(half(SHARDED_POD_NAME)), SHARDED_JOB_NAME);
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
        // Pods as Kubernetes runs them: the host name `{job}-{index}` for every pod of an
        // index (which the part ignores), the Job's name and uid and the pod's own name from
        // the downward API.
        let pod = |job: &str, uid: Option<&str>, name: &str, index: u32| {
            let index = index.to_string();
            let host = format!("{job}-{index}");
            let mut pairs = vec![
                (JOB_COMPLETION_INDEX, index.as_str()),
                (SHARDED_TASK_COUNT, "8"),
                ("HOSTNAME", host.as_str()),
                (SHARDED_JOB_NAME, job),
                (SHARDED_POD_NAME, name),
            ];
            if let Some(uid) = uid {
                pairs.push((SHARDED_JOB_UID, uid));
            }
            TaskPart::from_vars(vars(&pairs)).unwrap()
        };
        let uid = Some("0c1f3e2a");
        let holder = pod("adopt-1", uid, "adopt-1-3-abcde", 3).holder();
        assert!(pod("adopt-1", uid, "adopt-1-3-fghij", 3).supersedes(&holder));
        // The same pod (a duplicate), another index, another Job: with a host name that
        // parses the same (`adopt-1-3`: job `adopt-1` index 3, or job `adopt` index 1),
        // or the same name but another uid (deleted and created again).
        assert!(!pod("adopt-1", uid, "adopt-1-3-abcde", 3).supersedes(&holder));
        assert!(!pod("adopt-1", uid, "adopt-1-4-fghij", 4).supersedes(&holder));
        assert!(!pod("adopt-2", uid, "adopt-2-3-fghij", 3).supersedes(&holder));
        assert!(!pod("adopt", uid, "adopt-1-3-fghij", 3).supersedes(&holder));
        assert!(!pod("adopt-1", Some("77aa"), "adopt-1-3-fghij", 3).supersedes(&holder));
        assert!(!pod("adopt-1", None, "adopt-1-3-fghij", 3).supersedes(&holder));
        // Without the uid on either side, the Job's name decides.
        let unnamed = pod("adopt-1", None, "adopt-1-3-abcde", 3).holder();
        assert!(pod("adopt-1", None, "adopt-1-3-fghij", 3).supersedes(&unnamed));
        // Stored and read back, a holder keeps what tells it.
        let stored = serde_json::to_value(&holder).unwrap();
        assert_eq!(stored["job"], "adopt-1");
        assert_eq!(serde_json::from_value::<Holder>(stored).unwrap(), holder);
        // A pod holder stored before the Job's name was: no pod follows it.
        let old: Holder = serde_json::from_value(serde_json::json!(
            {"index": 3, "attempt": 0, "engine": "kubernetes", "run": "adopt-1-3-abcde"}
        ))
        .unwrap();
        assert_eq!(old.engine, Engine::Unknown);
        assert!(!pod("adopt-1", uid, "adopt-1-3-fghij", 3).supersedes(&old));
        // The host name alone tells nothing.
        let host_only = TaskPart::from_vars(vars(&[
            (JOB_COMPLETION_INDEX, "3"),
            (SHARDED_TASK_COUNT, "8"),
            ("HOSTNAME", "adopt-1-3"),
        ]))
        .unwrap();
        assert_eq!(host_only.engine, Engine::Unknown);
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
