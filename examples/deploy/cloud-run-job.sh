#!/usr/bin/env bash
# A tracked adoption job on Cloud Run jobs: one task per part, each told its part by
# CLOUD_RUN_TASK_INDEX and CLOUD_RUN_TASK_COUNT; a failed task is retried on a fresh container
# within seconds, and its next attempt (CLOUD_RUN_TASK_ATTEMPT of the same CLOUD_RUN_EXECUTION)
# takes its part over at once from Firestore's checkpoint, so each retry goes on with the part
# instead of waiting out the crashed attempt's lease. Watch it from anywhere with
# `adopt_job status adopt-instruments`.
set -euo pipefail
: "${PROJECT:?set PROJECT}" "${REGION:?set REGION}" "${IMAGE:?set IMAGE, built from adopt_job}"
TASKS=${TASKS:-8}

gcloud run jobs create adopt-instruments \
  --project "$PROJECT" --region "$REGION" \
  --image "$IMAGE" \
  --command adopt_job --args run,adopt-instruments \
  --set-env-vars "GOOGLE_CLOUD_PROJECT=$PROJECT" \
  --tasks "$TASKS" --parallelism "$TASKS" \
  --max-retries 10 --task-timeout 24h
gcloud run jobs execute adopt-instruments --project "$PROJECT" --region "$REGION"
