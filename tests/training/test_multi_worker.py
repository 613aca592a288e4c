"""MultiWorkerMirroredStrategy: 2 worker processes on 127.0.0.1 train, checkpoint,
and resume after a worker is killed mid-run."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

SCRIPT = os.path.join(os.path.dirname(__file__), "multi_worker_job.py")
STEPS = 12
# Seconds per step of the first job: it is killed once step 6 is saved, so
# the 6 steps after (9 s at least) leave the test time to see that step and
# kill it before it ends. Sleeping costs no CPU; steps do.
SLEEP = 1.5


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def start(output_dir, ports, sleep, log_dir, tag):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    procs = []
    for index in range(2):
        log = open(os.path.join(log_dir, f"{tag}-{index}.log"), "w")
        args = [sys.executable, SCRIPT, str(index), *map(str, ports)]
        args += [output_dir, str(STEPS), str(sleep)]
        procs.append(
            subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        )
    return procs


def latest_step(directory):
    latest = tf.train.latest_checkpoint(directory)
    return int(latest.rsplit("-", 1)[1]) if latest else 0


@pytest.mark.slow
def test_two_workers_train_and_resume_after_a_kill(tmp_path):
    output_dir = str(tmp_path / "run")
    checkpoints = os.path.join(output_dir, "checkpoints")
    procs = start(output_dir, free_ports(2), SLEEP, tmp_path, "first")
    deadline = time.time() + 240
    while latest_step(checkpoints) < 6:
        assert time.time() < deadline, "no checkpoint appeared"
        assert all(p.poll() is None for p in procs), "a worker died early"
        time.sleep(0.5)
    # Kill worker 1 mid-run; a synchronous job cannot go on without it, so the
    # job is restarted (as a cluster manager would) and resumes.
    procs[1].send_signal(signal.SIGKILL)
    procs[1].wait()
    procs[0].send_signal(signal.SIGKILL)
    procs[0].wait()
    killed_at = latest_step(checkpoints)
    assert 0 < killed_at < STEPS
    # Worker 1 wrote its copies under the run, at a path it reuses on restart.
    private = [os.path.join(output_dir, ".worker-1")]
    private.append(os.path.join(checkpoints, ".worker-1"))
    assert all(os.path.isdir(p) for p in private)
    procs = start(output_dir, free_ports(2), 0.0, tmp_path, "second")
    for p in procs:
        assert p.wait(timeout=300) == 0
    results = []
    for index in range(2):
        log = (tmp_path / f"second-{index}.log").read_text()
        assert f"Resuming from step {killed_at}" in log
        results.append(json.loads(log.strip().splitlines()[-1]))
    assert [r["global_step"] for r in results] == [STEPS, STEPS]
    assert latest_step(checkpoints) == STEPS
    assert not any(os.path.exists(p) for p in private), "worker 1's files stayed"
    # Only the chief wrote the run's files.
    assert os.path.exists(os.path.join(output_dir, "curves.png"))
    assert (
        json.load(open(os.path.join(output_dir, "metrics.json")))["global_step"]
        == STEPS
    )
