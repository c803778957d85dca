//! The deployment files in `examples/deploy/` run the job binary this crate builds, with the
//! variables `TaskPart` reads: each task of the Indexed Job or the Cloud Run job gets a part,
//! and together the parts are the job's.

use std::path::Path;

use sharded_runtime::jobs::{Engine, TaskPart};

fn deploy(file: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("deploy")
            .join(file),
    )
    .unwrap()
}

#[test]
fn the_indexed_job_gives_every_pod_its_part_and_runs_the_job_binary() {
    let manifest: serde_json::Value = serde_json::from_str(&deploy("indexed-job.json")).unwrap();
    let spec = &manifest["spec"];
    assert_eq!(manifest["kind"], "Job");
    assert_eq!(spec["completionMode"], "Indexed");
    let completions = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"].as_u64(), Some(completions));
    let container = &spec["template"]["spec"]["containers"][0];
    let command: Vec<&str> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    assert_eq!(command, ["adopt_job", "run", "adopt-instruments"]);
    // The binary the command names is this crate's.
    assert!(Path::new(env!("CARGO_BIN_EXE_adopt_job")).is_file());
    let env = container["env"].as_array().unwrap();
    let value = |name: &str| {
        env.iter()
            .find(|var| var["name"] == name)
            .and_then(|var| var["value"].as_str())
            .map(str::to_owned)
    };
    // What the downward API fills in, by the path the manifest names.
    let from_pod = |name: &str| {
        env.iter()
            .find(|var| var["name"] == name)
            .and_then(|var| var["valueFrom"]["fieldRef"]["fieldPath"].as_str())
            .map(str::to_owned)
    };
    let count = value("SHARDED_TASK_COUNT").expect("the manifest sets the task count");
    assert_eq!(count.parse::<u64>().unwrap(), completions);
    assert_eq!(
        from_pod("SHARDED_JOB_NAME").as_deref(),
        Some("metadata.labels['batch.kubernetes.io/job-name']")
    );
    assert_eq!(
        from_pod("SHARDED_JOB_UID").as_deref(),
        Some("metadata.labels['batch.kubernetes.io/controller-uid']")
    );
    assert_eq!(
        from_pod("SHARDED_POD_NAME").as_deref(),
        Some("metadata.name")
    );
    // The pods as the Job controller makes them: JOB_COMPLETION_INDEX 0..completions, the
    // host name `{job}-{index}`, the labels the downward API reads, a name of the pod's own.
    let job = manifest["metadata"]["name"].as_str().unwrap();
    let pod_vars = |index: u64, pod: &str| {
        let (count, job, pod) = (count.clone(), job.to_owned(), pod.to_owned());
        move |name: &str| match name {
            "JOB_COMPLETION_INDEX" => Some(index.to_string()),
            "SHARDED_TASK_COUNT" => Some(count.clone()),
            "HOSTNAME" => Some(format!("{job}-{index}")),
            "SHARDED_JOB_NAME" => Some(job.clone()),
            "SHARDED_JOB_UID" => Some("5b9e1f7c-0d4a-4c1e-9f63-2a8d7b1c0e55".to_owned()),
            "SHARDED_POD_NAME" => Some(pod.clone()),
            _ => None,
        }
    };
    for index in 0..completions {
        let part = TaskPart::from_vars(pod_vars(index, &format!("{job}-{index}-x7k2p"))).unwrap();
        assert_eq!(
            (u64::from(part.index), u64::from(part.count)),
            (index, completions)
        );
        match part.engine {
            Engine::Kubernetes {
                job: ref named,
                ref pod,
                ..
            } => {
                assert_eq!(
                    (named.as_str(), pod.as_str()),
                    (job, format!("{job}-{index}-x7k2p").as_str())
                )
            }
            ref other => panic!("{other:?}"),
        }
    }
}

#[test]
fn the_cloud_run_job_runs_the_job_binary_with_a_task_per_part() {
    let script = deploy("cloud-run-job.sh");
    assert!(script.contains("--command adopt_job --args run,adopt-instruments"));
    assert!(script.contains("--tasks \"$TASKS\" --parallelism \"$TASKS\""));
    // Cloud Run sets CLOUD_RUN_TASK_INDEX and CLOUD_RUN_TASK_COUNT in each task.
    let part = TaskPart::from_vars(|name| match name {
        "CLOUD_RUN_TASK_INDEX" => Some("7".into()),
        "CLOUD_RUN_TASK_COUNT" => Some("8".into()),
        "CLOUD_RUN_TASK_ATTEMPT" => Some("2".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!((part.index, part.count, part.attempt), (7, 8, 2));
}
