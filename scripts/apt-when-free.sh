# Sourced by setup-editors.sh and setup-vscode.sh: apt-get that waits for another apt-get or dpkg
# instead of failing (README command 2 runs beside unattended upgrades and other setups).
# apt's own DPkg::Lock::Timeout covers the dpkg lock but not the lists lock of `apt-get update`
# (apt 2.6), and waits without a word: this retries on either lock, says once what it waits for,
# and gives up after $PALLAS_APT_LOCK_WAIT seconds (default 600).

apt_get_when_free() {
  local name="${0##*/}" as_root=() errors status=0 waited=0 said=""
  name="${name%.sh}"
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "$name: need root or sudo to run apt-get $*" >&2
      return 1
    fi
    as_root=(sudo)
  fi
  errors="$(mktemp)"
  while :; do
    status=0
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" 2>"$errors" || status=$?
    if [ "$status" -ne 0 ] && grep -q "Could not get lock" "$errors" && [ "$waited" -lt "${PALLAS_APT_LOCK_WAIT:-600}" ]; then
      if [ -z "$said" ]; then
        echo "$name: waiting for another apt-get or dpkg to finish ($(grep -m1 'Could not get lock' "$errors" | sed 's/^E: //'))" >&2
        said=1
      fi
      sleep 2
      waited=$((waited + 2))
      continue
    fi
    cat "$errors" >&2
    rm -f "$errors"
    return "$status"
  done
}
