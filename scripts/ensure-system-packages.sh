#!/usr/bin/env bash
# Installs the Debian packages the test suite starts for real (influxd and mosquitto as servers,
# chromium as the browser of the web-page tests, strace to watch which files a real process syncs,
# tinyproxy as the corporate forward proxy outbound calls go through, unzip's zipinfo to list a
# release zip as an operator's tool sees it, promtool to check and unit-test docs/prometheus/alerts.yml,
# python3-aiosmtpd as the SMTP server alert e-mails go to),
# only when they are missing, so a warm machine pays nothing.
set -euo pipefail

missing=()
command -v influxd >/dev/null 2>&1 || missing+=(influxdb)
command -v mosquitto >/dev/null 2>&1 && [ -x "$(command -v mosquitto)" ] || missing+=(mosquitto)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v strace >/dev/null 2>&1 || missing+=(strace)
command -v tinyproxy >/dev/null 2>&1 || missing+=(tinyproxy)
command -v zipinfo >/dev/null 2>&1 || missing+=(unzip)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
/usr/bin/python3 -c 'import aiosmtpd' >/dev/null 2>&1 || missing+=(python3-aiosmtpd)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
  echo "error: missing Debian packages: ${missing[*]} (run as root, or install them: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The packages' own services are not wanted (tests start their own servers on free ports).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  remove_policy=1
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
[ "${remove_policy:-0}" = 1 ] && $sudo rm -f /usr/sbin/policy-rc.d
command -v influxd >/dev/null && command -v mosquitto >/dev/null && command -v chromium >/dev/null
