//! The deployment files in `examples/deploy/` run the job binary this crate builds, with the
//! variables `TaskPart` reads: each task of the Indexed Job or the Cloud Run job gets a part,
//! and together the parts are the job's.

use std::path::Path;

use sharded_runtime::jobs::TaskPart;

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
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|var| {
            (
                var["name"].as_str().unwrap().to_owned(),
                var["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let count = env
        .iter()
        .find(|(name, _)| name == "SHARDED_TASK_COUNT")
        .map(|(_, value)| value.clone())
        .expect("the manifest sets the task count");
    assert_eq!(count.parse::<u64>().unwrap(), completions);
    // Kubernetes sets JOB_COMPLETION_INDEX to 0..completions in the pods.
    for index in 0..completions {
        let part = TaskPart::from_vars(|name| match name {
            "JOB_COMPLETION_INDEX" => Some(index.to_string()),
            "SHARDED_TASK_COUNT" => Some(count.clone()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            (u64::from(part.index), u64::from(part.count)),
            (index, completions)
        );
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
