#!/bin/sh
# Makes sure tshark (Wireshark's command-line reader) is installed, from the distribution's
# packages: the pcap export test decodes the exported file with it. Prints the path of tshark,
# or a one-line reason and exits 1 when it cannot be installed (no root, no apt-get, no network).
set -u
if command -v tshark >/dev/null 2>&1; then
    command -v tshark
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-tshark: tshark missing and apt-get not available" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-tshark: tshark missing and not root (install the tshark package)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark's package asks whether non-root users may capture: answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
if ! apt-get install -y -q --no-install-recommends tshark >/tmp/ensure-tshark.log 2>&1; then
    apt-get update -q >>/tmp/ensure-tshark.log 2>&1
    if ! apt-get install -y -q --no-install-recommends tshark >>/tmp/ensure-tshark.log 2>&1; then
        echo "ensure-tshark: apt-get install tshark failed (see /tmp/ensure-tshark.log)" >&2
        exit 1
    fi
fi
command -v tshark
