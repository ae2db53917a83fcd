#!/bin/sh
# Installs Svc's edge agent from this release folder (svc-<version>-linux-<arch>/) as a systemd
# service; run it as root from the unpacked archive. docs/install.md explains each step.
#
#   sudo ./install.sh [--root DIR] [--no-systemctl]
#
# What it does (again on an upgrade: the config is never overwritten):
#   user svc     a system user and group, no login shell, home /var/lib/svc
#   /opt/svc     root:root 0755   the executable (0755), LICENSE, THIRD-PARTY-NOTICES.txt, INSTALL.md
#   /etc/svc     root:svc  0750   svc.yaml (root:svc 0640, copied only if absent), certs/ (root:svc 0750)
#   /var/lib/svc svc:svc   0750   the data folder: working directory, local queue, crash dumps
#   /var/log/svc svc:svc   0750   log files, when the config turns fileLogging on
#   /etc/systemd/system/svc.service (0644), then systemctl daemon-reload and enable (not start:
#   edit the config first). A running service is stopped before its executable is replaced and
#   started again afterwards.
#
# --root DIR (or DESTDIR=DIR): install under DIR instead of /, touching nothing outside it: the user
# is added to DIR/etc/passwd and DIR/etc/group (useradd --prefix), the owners are its numeric ids,
# and the unit is enabled with `systemctl --root DIR` (links only; no daemon is asked).
# --no-systemctl: write the unit but neither reload, enable, stop nor start anything.
set -eu

ROOT=${DESTDIR:-}
SYSTEMCTL=yes
while [ $# -gt 0 ]; do
  case $1 in
    --root) [ $# -ge 2 ] || { echo "install.sh: --root needs a directory" >&2; exit 2; }; ROOT=$2; shift 2 ;;
    --root=*) ROOT=${1#--root=}; shift ;;
    --no-systemctl) SYSTEMCTL=no; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
ROOT=${ROOT%/}
HERE=$(cd "$(dirname "$0")" && pwd)

if [ "$(id -u)" != 0 ]; then
  echo "install.sh: run it as root (sudo ./install.sh)" >&2
  exit 1
fi
for file in svc svc.yaml svc.service LICENSE THIRD-PARTY-NOTICES.txt INSTALL.md; do
  [ -f "$HERE/$file" ] || { echo "install.sh: $HERE/$file is missing: unpack the whole archive" >&2; exit 1; }
done
if [ -n "$ROOT" ]; then
  [ -d "$ROOT" ] || { echo "install.sh: --root $ROOT is not a directory" >&2; exit 1; }
  ROOT=$(cd "$ROOT" && pwd)
fi

# The system user, in ROOT's account files when a root is given.
if grep -q '^svc:' "$ROOT/etc/passwd" 2>/dev/null; then
  echo "user svc exists"
else
  if [ -n "$ROOT" ]; then prefix="--prefix $ROOT"; else prefix=""; fi
  # shellcheck disable=SC2086 # $prefix is two words or none
  useradd $prefix --system --user-group --home-dir /var/lib/svc --no-create-home \
    --shell /usr/sbin/nologin --comment "Svc edge agent" svc
  echo "created system user svc (no login)"
fi
uid=$(awk -F: '$1 == "svc" { print $3 }' "$ROOT/etc/passwd")
gid=$(awk -F: '$1 == "svc" { print $4 }' "$ROOT/etc/passwd")

unit="$ROOT/etc/systemd/system/svc.service"
running=no
if [ -z "$ROOT" ] && [ "$SYSTEMCTL" = yes ] && [ -d /run/systemd/system ] && systemctl is-active --quiet svc; then
  echo "stopping svc to replace its executable (its queue stays in /var/lib/svc)"
  systemctl stop svc
  running=yes
fi

install -d -m 0755 -o 0 -g 0 "$ROOT/opt/svc"
install -d -m 0750 -o 0 -g "$gid" "$ROOT/etc/svc" "$ROOT/etc/svc/certs"
install -d -m 0750 -o "$uid" -g "$gid" "$ROOT/var/lib/svc" "$ROOT/var/log/svc"
install -d -m 0755 "$ROOT/etc/systemd/system"
# A new file moved over the old one: a running copy keeps its own until it restarts.
install -m 0755 -o 0 -g 0 "$HERE/svc" "$ROOT/opt/svc/.svc.new"
mv -f "$ROOT/opt/svc/.svc.new" "$ROOT/opt/svc/svc"
for file in LICENSE THIRD-PARTY-NOTICES.txt INSTALL.md; do
  install -m 0644 -o 0 -g 0 "$HERE/$file" "$ROOT/opt/svc/$file"
done
echo "installed $ROOT/opt/svc/svc"
if [ -e "$ROOT/etc/svc/svc.yaml" ]; then
  echo "kept $ROOT/etc/svc/svc.yaml (the shipped one is $HERE/svc.yaml)"
else
  install -m 0640 -o 0 -g "$gid" "$HERE/svc.yaml" "$ROOT/etc/svc/svc.yaml"
  echo "wrote $ROOT/etc/svc/svc.yaml: set the certificates and servers in it"
fi
install -m 0644 -o 0 -g 0 "$HERE/svc.service" "$unit"
echo "wrote $unit"

if [ "$SYSTEMCTL" = no ] || ! command -v systemctl >/dev/null 2>&1; then
  echo "systemctl not run: enable the service with systemctl daemon-reload && systemctl enable svc"
elif [ -n "$ROOT" ]; then
  systemctl --root "$ROOT" enable svc.service
elif [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable svc.service
  if [ "$running" = yes ]; then
    systemctl start svc
    echo "started svc again"
  fi
else
  echo "systemd is not running here: enable the service with systemctl enable svc"
fi
echo "next: edit /etc/svc/svc.yaml, check it with /opt/svc/svc validate-config --config /etc/svc/svc.yaml, then systemctl start svc"
