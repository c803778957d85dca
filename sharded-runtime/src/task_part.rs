//! Which part of a partitioned job a task runs, as the engine running it says: Cloud Run jobs
//! tell each task `CLOUD_RUN_TASK_INDEX`, `CLOUD_RUN_TASK_COUNT` and `CLOUD_RUN_TASK_ATTEMPT`;
//! a Kubernetes Indexed Job tells each pod `JOB_COMPLETION_INDEX`, and its manifest sets the
//! count (`SHARDED_TASK_COUNT`, the job's `completions`). A missing, malformed or
//! inconsistent value is a typed error before the task does anything.

use crate::partition::{IdRange, MAX_PARTS};
use crate::{Error, Result};

/// Cloud Run jobs' task index (from 0), task count and attempt (from 0, a retry on a fresh
/// container counting up).
pub const CLOUD_RUN_TASK_INDEX: &str = "CLOUD_RUN_TASK_INDEX";
/// See [`CLOUD_RUN_TASK_INDEX`].
pub const CLOUD_RUN_TASK_COUNT: &str = "CLOUD_RUN_TASK_COUNT";
/// See [`CLOUD_RUN_TASK_INDEX`].
pub const CLOUD_RUN_TASK_ATTEMPT: &str = "CLOUD_RUN_TASK_ATTEMPT";
/// A Kubernetes Indexed Job's completion index (from 0), which it sets in every pod.
pub const JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";
/// The number of parts of a Kubernetes Indexed Job, which Kubernetes does not tell a pod: its
/// manifest sets it to the job's `completions`.
pub const SHARDED_TASK_COUNT: &str = "SHARDED_TASK_COUNT";

/// One task's part of a job split into `count` parts: part `index` (from 0), on its
/// `attempt` (from 0). Its [`range`](Self::range) is the ids it covers; the parts of one
/// count cover every id exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TaskPart {
    /// Which part, from 0.
    pub index: u32,
    /// How many parts the job has.
    pub count: u32,
    /// Which attempt at the part this is, from 0 (Cloud Run counts retries; elsewhere 0).
    pub attempt: u32,
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
        })
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
        let (index, count, attempt) = match (cloud_run, kubernetes) {
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
                (index, count, attempt)
            }
            (None, Some(index)) => {
                let index = number(JOB_COMPLETION_INDEX, &index)?;
                (index, required(&lookup, SHARDED_TASK_COUNT)?, 0)
            }
            (None, None) => {
                return Err(Error::InvalidOptions {
                    option: "CLOUD_RUN_TASK_INDEX or JOB_COMPLETION_INDEX",
                    expected: "set by the engine running the task (a Cloud Run job, a Kubernetes Indexed Job); elsewhere, make the part with TaskPart::new",
                });
            }
        };
        Ok(TaskPart {
            attempt,
            ..TaskPart::new(index, count)?
        })
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
