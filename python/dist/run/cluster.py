"""An emulated cluster on this machine: N hosts as Linux network namespaces
on one bridge, each host's link shaped with tc's token bucket (tbf), and MPI
processes inside them talking TCP, as on a cluster with slow links.

  scripts/emulated_cluster.py run --hosts 2 --rate 10gbit -- COMMAND...
      makes the cluster, runs COMMAND with DIST_RUN_CLUSTER=1 (dist-run then
      runs its processes in the cluster), removes the cluster (also when
      COMMAND fails or the script is interrupted)
  scripts/emulated_cluster.py up --hosts 2 --rate 10gbit
  scripts/emulated_cluster.py down
  scripts/emulated_cluster.py check
      exits 0 where a cluster can be made (root, iproute2, tbf), else says why

With the cluster up, `dist-run --emulated-cluster` (or DIST_RUN_CLUSTER=1)
runs a program on it, its processes spread round-robin over the hosts.

Host i is the namespace dist-h<i> with address 10.87.0.<i+1>, its end of
the link eth0; the bridge dist-br0 (10.87.0.254) in this namespace joins
them. Both ends of a host's link are shaped to RATE, so that what it sends
and what it receives each get RATE, as a host's network card does. Every
name starts with "dist-": `down` removes every namespace and link with
that prefix, so a killed run's leftovers go too (and `up` removes them
first).

MPICH's hydra starts a proxy in each namespace (its ssh launcher, with a
shell script in place of ssh) and reaches them over the bridge; MPICH runs
over UCX's TCP transport (UCX_TLS=tcp,self) on eth0, every other process
remote (MPIR_CVAR_NOLOCAL=1): no shared memory between hosts.

This file is standalone (no dist imports), so that scripts/ can run it
without a build.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys

PREFIX = "dist-"
BRIDGE = "dist-br0"
SUBNET = "10.87.0"
BRIDGE_ADDRESS = f"{SUBNET}.254"
MAX_HOSTS = 16
STATE_DIR = "/run/dist-emulated-cluster"
STATE = os.path.join(STATE_DIR, "state.json")
# hydra's ssh launcher runs `EXEC [ssh options] HOST COMMAND...`; this runs
# the command in the host's namespace through a shell, as ssh would.
EXEC = os.path.join(STATE_DIR, "exec")
EXEC_SCRIPT = """#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in -*) shift ;; *) break ;; esac
done
host=$1
shift
case "$host" in
  dist-h*) ;;
  *) echo "emulated cluster: $host is not one of its hosts" >&2; exit 255 ;;
esac
exec ip netns exec "$host" sh -c "$*"
"""


class ClusterError(RuntimeError):
    pass


def _ip(*args, namespace=None, check=True):
    command = ["ip"] + (["netns", "exec", namespace, "ip"] if namespace else []) + list(args)
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise ClusterError(f"{' '.join(command)}: {result.stderr.strip()}")
    return result


def _tc(*args, namespace=None):
    command = (["ip", "netns", "exec", namespace] if namespace else []) + ["tc"] + list(args)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise ClusterError(f"{' '.join(command)}: {result.stderr.strip()}")


def host_name(i):
    return f"{PREFIX}h{i}"


def namespaces():
    """The namespaces this script made (by their prefix)."""
    result = _ip("netns", "list", check=False)
    return [line.split()[0] for line in result.stdout.splitlines() if line.startswith(PREFIX)]


def links():
    """The links in this namespace this script made (by their prefix)."""
    result = _ip("-o", "link", "show", check=False)
    names = []
    for line in result.stdout.splitlines():
        parts = line.split(":")
        if len(parts) > 1:
            name = parts[1].strip().split("@")[0]
            if name.startswith(PREFIX):
                names.append(name)
    return names


def down():
    """Removes every namespace and link this script made; deleting a
    namespace deletes its end of a veth pair, and with it the other end.
    Returns what was removed."""
    removed = []
    for ns in namespaces():
        _ip("netns", "delete", ns, check=False)
        removed.append(ns)
    for link in links():
        _ip("link", "delete", link, check=False)
        removed.append(link)
    shutil.rmtree(STATE_DIR, ignore_errors=True)
    left = namespaces() + links()
    if left:
        raise ClusterError(f"could not remove {', '.join(left)}")
    return removed


def _shape(device, rate, namespace=None):
    # A token bucket of RATE: the burst holds at least one full-size frame
    # and 1 ms of traffic (tbf's rule of thumb), the queue 10 ms.
    _tc(
        "qdisc",
        "replace",
        "dev",
        device,
        "root",
        "tbf",
        "rate",
        rate,
        "burst",
        _burst(rate),
        "latency",
        "10ms",
        namespace=namespace,
    )


def parse_rate(rate):
    """Bits per second of a tc rate such as 10gbit, 500mbit, 1e9bit."""
    units = {"gbit": 1e9, "mbit": 1e6, "kbit": 1e3, "bit": 1.0}
    text = rate.strip().lower()
    for unit, scale in units.items():
        if text.endswith(unit):
            try:
                value = float(text[: -len(unit)])
            except ValueError:
                break
            if not (value > 0 and value * scale < 1e13):
                break
            return value * scale
    raise ClusterError(f"rate {rate!r}: expected a positive number with gbit, mbit or kbit")


def _burst(rate):
    bytes_per_ms = parse_rate(rate) / 8 / 1000
    return str(max(int(bytes_per_ms), 64 * 1024))


def up(hosts, rate):
    """Makes the cluster: the bridge, and per host a namespace, a veth pair
    (one end on the bridge, the other the host's eth0) shaped at both ends.
    A cluster that is up is removed first."""
    if not 1 <= hosts <= MAX_HOSTS:
        raise ClusterError(f"--hosts {hosts}: between 1 and {MAX_HOSTS}")
    parse_rate(rate)
    down()
    try:
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{BRIDGE_ADDRESS}/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for i in range(hosts):
            ns, outside = host_name(i), f"{PREFIX}v{i}"
            _ip("netns", "add", ns)
            _ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", outside, "master", BRIDGE)
            _ip("link", "set", outside, "up")
            _ip("addr", "add", f"{SUBNET}.{i + 1}/24", "dev", "eth0", namespace=ns)
            _ip("link", "set", "eth0", "up", namespace=ns)
            _ip("link", "set", "lo", "up", namespace=ns)
            _shape("eth0", rate, namespace=ns)
            _shape(outside, rate)
        os.makedirs(STATE_DIR, exist_ok=True)
        with open(EXEC, "w") as f:
            f.write(EXEC_SCRIPT)
        os.chmod(EXEC, 0o755)
        with open(STATE, "w") as f:
            json.dump({"hosts": hosts, "rate": rate}, f)
    except BaseException:
        down()
        raise


def state():
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ClusterError("no emulated cluster is up (scripts/emulated_cluster.py up)") from None


def check():
    """None where a cluster can be made here, else why not."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
    for tool in ("ip", "tc", "mpiexec.hydra"):
        if not shutil.which(tool):
            return f"no {tool} (iproute2, mpich)"
    probe = f"{PREFIX}probe"
    result = _ip("netns", "add", probe, check=False)
    if result.returncode != 0:
        return f"cannot make a network namespace: {result.stderr.strip()}"
    try:
        _ip("link", "add", "dist-pv0", "type", "veth", "peer", "name", "dist-pv1")
        _tc(
            "qdisc",
            "add",
            "dev",
            "dist-pv0",
            "root",
            "tbf",
            "rate",
            "1gbit",
            "burst",
            "64kb",
            "latency",
            "10ms",
        )
    except ClusterError as e:
        return str(e)
    finally:
        _ip("link", "delete", "dist-pv0", check=False)
        _ip("netns", "delete", probe, check=False)
    return None


# What MPICH and UCX need inside the cluster: TCP on the host's eth0, no
# shared memory between processes (MPICH treats each host as remote).
ENVIRONMENT = {
    "UCX_TLS": "tcp,self",
    "UCX_NET_DEVICES": "eth0",
    "MPIR_CVAR_NOLOCAL": "1",
    # UCX's TCP transport can hang in MPI_Finalize (openucx/ucx#8738): the
    # runtime's dist_runtime_finalize exits once every process has finished.
    "DIST_RUNTIME_SKIP_FINALIZE": "1",
}


def hydra_arguments(n):
    """mpiexec.hydra's options that run `n` processes in the cluster that is
    up: its hosts (processes round-robin, as many per host as it takes),
    the launcher that enters their namespaces, the bridge for hydra's own
    connections, and the environment of the processes."""
    hosts = state()["hosts"]
    per_host = -(-n // hosts)
    arguments = [
        "-hosts",
        ",".join(f"{host_name(i)}:{per_host}" for i in range(hosts)),
        "-launcher",
        "ssh",
        "-launcher-exec",
        EXEC,
        "-iface",
        BRIDGE,
    ]
    for key, value in ENVIRONMENT.items():
        arguments += ["-genv", key, value]
    return arguments


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("up", "run"):
        s = sub.add_parser(name)
        s.add_argument("--hosts", type=int, default=2)
        s.add_argument("--rate", default="10gbit", help="each host's link, as tc writes it")
        if name == "run":
            s.add_argument("program", nargs=argparse.REMAINDER)
    sub.add_parser("down")
    sub.add_parser("check")
    args = p.parse_args(argv)
    try:
        if args.command == "check":
            why = check()
            print(why or "ok: an emulated cluster can be made here")
            return 1 if why else 0
        if args.command == "up":
            up(args.hosts, args.rate)
            print(f"up: {args.hosts} hosts at {args.rate} each")
            return 0
        if args.command == "down":
            removed = down()
            print(f"down: removed {len(removed)} namespaces and links")
            return 0
        # run: the cluster lives as long as the command, whatever ends it.
        program = args.program[1:] if args.program[:1] == ["--"] else args.program
        if not program:
            raise ClusterError("run: no command after --")

        def stop(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGHUP, stop)
        try:
            up(args.hosts, args.rate)
            env = dict(os.environ, DIST_RUN_CLUSTER="1")
            return subprocess.run(program, env=env).returncode
        except KeyboardInterrupt:
            return 130
        finally:
            down()
    except ClusterError as e:
        print(f"emulated_cluster: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
