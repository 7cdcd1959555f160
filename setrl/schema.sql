-- setrl's DuckDB schema. The only DDL in the project; setrl/store.py applies it.
-- Keys are content hashes, so re-running a stage with the same inputs writes the same keys
-- and `Store.insert` (INSERT OR IGNORE) never duplicates rows.

CREATE TABLE IF NOT EXISTS studies (
    study_id     VARCHAR PRIMARY KEY,   -- hash(study name, profile, config hash)
    name         VARCHAR,
    profile      VARCHAR,
    config_hash  VARCHAR,
    config_json  JSON,
    created_at   TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS runs (         -- one orchestrated (or in-process) execution of a study
    run_id       VARCHAR PRIMARY KEY,
    study_id     VARCHAR,
    profile      VARCHAR,
    config_hash  VARCHAR,
    git_rev      VARCHAR,
    orchestrator VARCHAR,                  -- prefect flow-run id, or 'cli'
    status       VARCHAR,                  -- running | completed | failed
    started_at   TIMESTAMP,
    finished_at  TIMESTAMP,
    error        VARCHAR
);

CREATE TABLE IF NOT EXISTS stage_runs (
    stage_run_id VARCHAR PRIMARY KEY,     -- hash(run_id, stage, inputs_hash)
    run_id       VARCHAR,
    study_id     VARCHAR,
    stage        VARCHAR,                  -- prepare | calibrate | train:<method>:<seed> | evaluate:<model> | report
    inputs_hash  VARCHAR,
    status       VARCHAR,                  -- running | completed | failed | cached
    started_at   TIMESTAMP,
    finished_at  TIMESTAMP,
    seconds      DOUBLE,
    error        VARCHAR
);

CREATE TABLE IF NOT EXISTS problems (
    problem_id   VARCHAR PRIMARY KEY,     -- Problem.problem_id (content hash)
    source       VARCHAR,
    title        VARCHAR,
    prompt       VARCHAR,
    entry_point  VARCHAR,
    test_style   VARCHAR,
    tests        JSON,
    prelude      VARCHAR,
    meta         JSON
);

CREATE TABLE IF NOT EXISTS problem_sets (  -- which problems a study trains / validates / evaluates on, and what was dropped
    study_id     VARCHAR,
    set_name     VARCHAR,                  -- train | validation | eval | dropped
    problem_id   VARCHAR,
    pass_count   INTEGER,                  -- base-model passes of samples_per_problem (train sources)
    reason       VARCHAR,                  -- why dropped: too_easy | too_hard | duplicate_title | near_duplicate:<train id>
    PRIMARY KEY (study_id, set_name, problem_id)
);

CREATE TABLE IF NOT EXISTS rollouts (
    rollout_id   VARCHAR PRIMARY KEY,     -- hash(purpose, model_id, step, problem_id, seed, sample_idx)
    study_id     VARCHAR,
    purpose      VARCHAR,                  -- filter | train | eval | validation
    model_id     VARCHAR,                  -- 'base' or '<method>/seed<k>[/step<s>]'
    step         INTEGER,                  -- training step (NULL outside training)
    problem_id   VARCHAR,
    sample_idx   INTEGER,
    text         VARCHAR,
    n_tokens     INTEGER,
    finish_reason VARCHAR,
    reward       DOUBLE,
    status       VARCHAR,                  -- sandbox verdict status
    reason       VARCHAR,
    cluster_id   INTEGER,                  -- judge cluster (NULL when not judged)
    created_at   TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS judgments (     -- the judge cache: one row per judged group
    cache_key      VARCHAR PRIMARY KEY,   -- hash(judge name+kind, model, prompt version, degenerate id, problem hash, responses hash)
    judge          VARCHAR,
    model          VARCHAR,
    prompt_version VARCHAR,
    problem_hash   VARCHAR,
    responses_hash VARCHAR,
    cluster_ids    INTEGER[],
    rationales     JSON,
    raw_response   VARCHAR,
    failed         BOOLEAN,
    error          VARCHAR,
    attempts       INTEGER,
    latency_s      DOUBLE,
    prompt_tokens  INTEGER,
    completion_tokens INTEGER,
    created_at     TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS judge_calls (   -- every request to an LLM judge and its outcome
    call_id      VARCHAR PRIMARY KEY,
    cache_key    VARCHAR,
    attempt      INTEGER,
    outcome      VARCHAR,                  -- ok | malformed | http_<code> | timeout | connection | error
    error        VARCHAR,
    latency_s    DOUBLE,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created_at   TIMESTAMP DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS calibration (
    study_id     VARCHAR,
    judge        VARCHAR,                  -- JudgeSpec.name
    calib_set    VARCHAR,                  -- file stem, or 'all'
    groups       INTEGER,
    responses    INTEGER,
    ari          DOUBLE,
    precision    DOUBLE,                   -- pairwise: same-cluster pairs that share a label
    recall       DOUBLE,                   -- pairwise: same-label pairs put in one cluster
    degenerate_accuracy DOUBLE,
    failures     INTEGER,
    latency_s    DOUBLE,
    tokens       INTEGER,
    selected     BOOLEAN,
    PRIMARY KEY (study_id, judge, calib_set)
);

CREATE TABLE IF NOT EXISTS train_metrics (
    run_key      VARCHAR,                  -- '<study_id>/<method>/seed<k>'
    study_id     VARCHAR,
    method       VARCHAR,
    seed         INTEGER,
    step         INTEGER,
    reward_mean  DOUBLE,
    pass_rate    DOUBLE,
    distinct_correct_clusters DOUBLE,      -- mean over prompts of distinct non-degenerate clusters among correct rollouts
    judge_failures INTEGER,
    judge_failure_rate DOUBLE,
    kl           DOUBLE,
    kl_coef      DOUBLE,
    entropy      DOUBLE,
    response_len DOUBLE,
    loss         DOUBLE,
    grad_norm    DOUBLE,
    t_sample     DOUBLE,
    t_score      DOUBLE,
    t_judge      DOUBLE,
    t_update     DOUBLE,
    validation_pass1 DOUBLE,               -- held-out validation pass@1 (NULL on steps without validation)
    extra        JSON,
    PRIMARY KEY (run_key, step)
);

CREATE TABLE IF NOT EXISTS eval_problems (  -- per model and problem: samples, passes, diversity
    study_id     VARCHAR,
    model_id     VARCHAR,                  -- 'base' or '<method>/seed<k>'
    method       VARCHAR,                  -- 'base' or method name
    seed         INTEGER,
    problem_id   VARCHAR,
    n            INTEGER,
    c            INTEGER,
    distinct_correct_clusters INTEGER,
    PRIMARY KEY (study_id, model_id, problem_id)
);

CREATE TABLE IF NOT EXISTS pass_at_k (
    study_id     VARCHAR,
    model_id     VARCHAR,                  -- '<method>/seed<k>', 'base', or '<method>' for seeds pooled
    method       VARCHAR,
    k            INTEGER,
    pass_at_k    DOUBLE,
    ci_low       DOUBLE,
    ci_high      DOUBLE,
    n_problems   INTEGER,
    PRIMARY KEY (study_id, model_id, k)
);

CREATE TABLE IF NOT EXISTS significance (  -- paired bootstrap over problems: method_a minus method_b
    study_id     VARCHAR,
    method_a     VARCHAR,
    method_b     VARCHAR,
    k            INTEGER,
    diff         DOUBLE,
    ci_low       DOUBLE,
    ci_high      DOUBLE,
    p_value      DOUBLE,
    PRIMARY KEY (study_id, method_a, method_b, k)
);

CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id  VARCHAR PRIMARY KEY,     -- hash(kind, path, sha256)
    study_id     VARCHAR,
    kind         VARCHAR,                  -- checkpoint | plot | report | model | table
    name         VARCHAR,
    path         VARCHAR,
    sha256       VARCHAR,
    bytes        BIGINT,
    meta         JSON,
    created_at   TIMESTAMP DEFAULT current_timestamp
);
