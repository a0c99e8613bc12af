#!/usr/bin/env bash
# A throwaway single-node Slurm cluster in one folder, for tests and for
# trying scripts/synth-slurm.sh on one machine: munged, slurmctld and slurmd
# with their configuration, keys, sockets, spool, state, pid and log files
# all under DIR. The system's Slurm and munge configuration (/etc/slurm,
# /etc/munge) is neither read nor written. Needs root (slurmd starts jobs
# as their user) and Debian's slurmctld, slurmd, slurm-client and munge.
#
#   scripts/slurm-local.sh up DIR     # start; prints the environment clients need
#   scripts/slurm-local.sh env DIR    # print that environment again
#   scripts/slurm-local.sh down DIR   # cancel every job, stop the daemons
#
# Clients (sbatch, squeue, scontrol, scancel) need SLURM_CONF=DIR/slurm.conf;
# the munge socket is named in that file (AuthInfo), so nothing else is
# needed. `up` exits 3 when something it needs is missing (the message
# names it), 1 when a daemon does not start (the message has its log), 2
# on bad arguments. `down` stops only the daemons whose pid files are in
# DIR, and is safe to run twice or after a failed `up`.
set -euo pipefail

usage() { echo "usage: scripts/slurm-local.sh up|env|down DIR (DIR an absolute path)" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action="$1"
DIR="$2"
[[ "$DIR" == /* ]] || { echo "slurm-local: DIR must be an absolute path, not $DIR" >&2; exit 2; }
[[ "$DIR" != *[[:space:]=,]* ]] || { echo "slurm-local: DIR must not contain spaces, '=' or ',' (slurm.conf cannot quote them): $DIR" >&2; exit 2; }
CONF="$DIR/slurm.conf"
SOCKET="$DIR/munge/munge.socket"
# Unix socket paths are limited to 107 bytes.
((${#SOCKET} + 10 < 108)) || { echo "slurm-local: DIR is too long for a unix socket path: $DIR" >&2; exit 2; }

print_env() { echo "export SLURM_CONF=$CONF"; }

# Waits up to $2 tenths of a second for pid $1 to end.
wait_gone() {
    local i
    for ((i = 0; i < $2; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

# Stops the daemon whose pid file is $1 (TERM, then KILL after 10 s).
stop_pidfile() {
    local f="$1" pid
    [[ -s "$f" ]] || return 0
    pid="$(cat "$f")"
    [[ "$pid" =~ ^[0-9]+$ ]] || { rm -f "$f"; return 0; }
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait_gone "$pid" 100 || { kill -KILL "$pid" 2>/dev/null || true; wait_gone "$pid" 20 || true; }
    fi
    rm -f "$f"
}

down() {
    [[ -d "$DIR" ]] || return 0
    # Jobs first, while slurmctld and slurmd can still end them: with
    # proctrack/linuxproc a job's processes outlive slurmd.
    if [[ -s "$DIR/run/slurmctld.pid" ]] && kill -0 "$(cat "$DIR/run/slurmctld.pid")" 2>/dev/null && [[ -f "$CONF" ]]; then
        local jobs i
        jobs="$(SLURM_CONF="$CONF" squeue --noheader --format=%A 2>/dev/null || true)"
        if [[ -n "$jobs" ]]; then
            # shellcheck disable=SC2086
            SLURM_CONF="$CONF" scancel $jobs 2>/dev/null || true
            for ((i = 0; i < 100; i++)); do
                [[ -z "$(SLURM_CONF="$CONF" squeue --noheader --format=%A 2>/dev/null || true)" ]] && break
                sleep 0.1
            done
        fi
    fi
    stop_pidfile "$DIR/run/slurmd.pid"
    stop_pidfile "$DIR/run/slurmctld.pid"
    stop_pidfile "$DIR/munge/munged.pid"
}

# A TCP port on 127.0.0.1 nothing listens on, from $1 upwards.
free_port() {
    local p="$1"
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
        p=$((p + 1))
    done
    echo "$p"
}

# The last lines of a log, indented, for an error message.
tail_log() { [[ -f "$1" ]] && sed 's/^/    /' < <(tail -n 15 "$1") || echo "    ($1 was not written)"; }

up() {
    [[ "$(id -u)" -eq 0 ]] || { echo "slurm-local: not root (slurmd runs jobs as their user, so it needs root)" >&2; exit 3; }
    local missing=() t
    for t in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
        command -v "$t" >/dev/null || missing+=("$t")
    done
    ((${#missing[@]} == 0)) || { echo "slurm-local: ${missing[*]} not found (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 3; }
    if [[ -s "$DIR/run/slurmctld.pid" ]] && kill -0 "$(cat "$DIR/run/slurmctld.pid")" 2>/dev/null; then
        echo "slurm-local: a cluster already runs in $DIR (scripts/slurm-local.sh down $DIR first)" >&2
        exit 1
    fi
    mkdir -p "$DIR"/{munge,state,spool,log,run}
    # munged refuses a key or socket folder others can write to or read.
    chmod 700 "$DIR/munge"
    [[ -s "$DIR/munge/munge.key" ]] || { head -c 1024 /dev/urandom > "$DIR/munge/munge.key"; chmod 400 "$DIR/munge/munge.key"; }

    local node cpus mem ctld_port slurmd_port
    node="$(hostname -s)"
    cpus="$(nproc)"
    # What slurmd will find, less a little, so the node is not drained.
    mem=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 9 / 10240))
    # Ports of their own, beside any other Slurm on this machine.
    ctld_port="$(free_port $((20000 + RANDOM % 20000)))"
    slurmd_port="$(free_port $((ctld_port + 1)))"
    : > "$DIR/plugstack.conf"
    cat > "$CONF" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster whose every file is
# under $DIR.
ClusterName=misaal-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
PlugStackConfig=$DIR/plugstack.conf
# No cgroups: jobs are tracked by process tree, nothing is confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# No slurmdbd, so no sacct: each finished job is one line here instead.
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
# Start jobs at once, and dependent jobs as soon as what they wait for ends.
SchedulerParameters=batch_sched_delay=0,sched_interval=1,sched_min_interval=100000
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=600
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

    munged --socket="$SOCKET" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
        --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed" --force 2>"$DIR/log/munged.err" || {
        echo "slurm-local: munged did not start:" >&2
        sed 's/^/    /' "$DIR/log/munged.err" >&2
        tail_log "$DIR/log/munged.log" >&2
        down
        exit 1
    }
    export SLURM_CONF="$CONF"
    slurmctld -f "$CONF" 2>"$DIR/log/slurmctld.err" || { echo "slurm-local: slurmctld did not start:" >&2; tail_log "$DIR/log/slurmctld.log" >&2; down; exit 1; }
    slurmd -f "$CONF" -N "$node" 2>"$DIR/log/slurmd.err" || { echo "slurm-local: slurmd did not start:" >&2; tail_log "$DIR/log/slurmd.log" >&2; down; exit 1; }
    # Up once the node takes jobs (30 s at most).
    local i state=""
    for ((i = 0; i < 150; i++)); do
        state="$(sinfo --noheader --nodes="$node" --format=%t 2>/dev/null || true)"
        [[ "$state" == idle ]] && break
        sleep 0.2
    done
    if [[ "$state" != idle ]]; then
        echo "slurm-local: the node is '${state:-unknown}', not idle, 30 s after slurmd started; slurmctld.log and slurmd.log:" >&2
        tail_log "$DIR/log/slurmctld.log" >&2
        tail_log "$DIR/log/slurmd.log" >&2
        down
        exit 1
    fi
    print_env
}

case "$action" in
    up) up ;;
    env) print_env ;;
    down) down ;;
    *) usage ;;
esac
