#!/usr/bin/env bash
# Runs the end-to-end tests (the `#[ignore]`d tests of tests/tests/e2e.rs) the
# way a desktop would host the app: inside a private D-Bus session, on an Xvfb
# display, with the dunst notification daemon, while dbus-monitor records every
# Notify call into artifacts/notify.log. The tests start tauri-driver and the
# app themselves, one WebDriver session at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
# Which packages cargo builds and tests: the whole workspace by default, so
# nothing recompiles after `.ci/test`'s `cargo test --workspace`. While
# iterating on the shell alone, "-p countersign -p countersign-e2e" is faster.
read -r -a selection <<<"${COUNTERSIGN_E2E_CARGO_ARGS:---workspace}"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

if [ -z "${COUNTERSIGN_E2E_IN_SESSION:-}" ]; then
  # Build first, outside the bus session, with exactly the feature resolution
  # of `cargo test --workspace` (nothing recompiles after .ci/test built it).
  cargo test "${selection[@]}" --no-run
  # The desk test runs the verifier's binary on an audit pack: the whole
  # workspace's build has it (its own tests run it), a selection may not.
  if [ "${selection[*]}" != "--workspace" ]; then
    cargo build -p countersign-verify --bin countersign-verify
  fi
  exec env COUNTERSIGN_E2E_IN_SESSION=1 dbus-run-session -- bash "$0" "$@"
fi

artifacts="$root/artifacts"
mkdir -p "$artifacts"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Waits (up to 10 s) until NAME is owned on the session bus.
until_on_bus() {
  for _ in $(seq 1 100); do
    dbus-send --session --dest=org.freedesktop.DBus --type=method_call --print-reply \
      /org/freedesktop/DBus org.freedesktop.DBus.ListNames 2>/dev/null | grep -q "$1" && return 0
    sleep 0.1
  done
}

# Xvfb picks a free display and writes its number to fd 3.
display_file="$(mktemp)"
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$display_file" 2>"$artifacts/xvfb.log" &
pids+=("$!")
for _ in $(seq 1 100); do
  [ -s "$display_file" ] && break
  sleep 0.1
done
if [ ! -s "$display_file" ]; then
  echo "[e2e] Xvfb did not start; see artifacts/xvfb.log" >&2
  exit 1
fi
export DISPLAY=":$(head -n1 "$display_file")"
rm -f "$display_file"
echo "[e2e] Xvfb on $DISPLAY, D-Bus session $DBUS_SESSION_BUS_ADDRESS"

# A real Secret Service for the app's approver key: gnome-keyring on this
# private session, its login keyring (created unlocked by the password on
# stdin) in a throwaway folder. Without it D-Bus would start one with no
# default collection, and every start of the app would make a new key.
keyring_home="$(mktemp -d)"
printf 'login password of the e2e keyring' | env HOME="$keyring_home" XDG_DATA_HOME="$keyring_home" \
  gnome-keyring-daemon --unlock --components=secrets --foreground >"$artifacts/keyring.log" 2>&1 &
pids+=("$!")
until_on_bus org.freedesktop.secrets

# Our own notification daemon (one auto-started by D-Bus would have no DISPLAY).
# Its context menu (`dunstctl context`, where a person picks a notification's
# "Approve…") is tests/dunst-menu.sh, which picks what a test wrote into
# artifacts/dunst-choice.
dunst_choice="$artifacts/dunst-choice"
rm -f "$dunst_choice"
dunstrc="$artifacts/dunstrc"
menu="$root/tests/dunst-menu.sh $dunst_choice"
if [ -r /etc/xdg/dunst/dunstrc ]; then
  # The system's configuration (what dunst read before), but for its menu.
  sed "s|^\([[:space:]]*\)dmenu = .*|\1dmenu = \"$menu\"|" /etc/xdg/dunst/dunstrc >"$dunstrc"
else
  printf '[global]\n    dmenu = "%s"\n' "$menu" >"$dunstrc"
fi
dunst -config "$dunstrc" >"$artifacts/dunst.log" 2>&1 &
pids+=("$!")
# A panel's tray (tests/tray-host.py, a StatusNotifierWatcher): the app's
# tray icon registers with it, and a test reads the icon's label and menu
# over D-Bus from the item it names in artifacts/tray-items.
tray_items="$artifacts/tray-items"
/usr/bin/python3 "$root/tests/tray-host.py" "$tray_items" >"$artifacts/tray-host.log" 2>&1 &
pids+=("$!")
until_on_bus org.kde.StatusNotifierWatcher
notify_log="$artifacts/notify.log"
: >"$notify_log"
dbus-monitor --session "interface='org.freedesktop.Notifications',member='Notify'" >"$notify_log" 2>&1 &
pids+=("$!")

export COUNTERSIGN_E2E_ARTIFACTS="$artifacts"
export COUNTERSIGN_E2E_NOTIFY_LOG="$notify_log"
export COUNTERSIGN_E2E_DUNST_CHOICE="$dunst_choice"
export COUNTERSIGN_E2E_TRAY_ITEMS="$tray_items"
# The test of the installed .deb runs only where .ci/test installed it.
skip=()
if [ "${COUNTERSIGN_E2E_INSTALLED:-}" != 1 ]; then
  skip=(--skip the_installed_package)
fi
# COUNTERSIGN_E2E_TARGET=perf runs tests/tests/perf.rs instead (tests/perf.sh).
cargo test "${selection[@]}" --test "${COUNTERSIGN_E2E_TARGET:-e2e}" -- --ignored --test-threads=1 "${skip[@]}" "$@"
