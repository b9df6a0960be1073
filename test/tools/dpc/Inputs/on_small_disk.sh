#!/bin/sh
# on_small_disk.sh DIR full|ro|SIZE CMD...: runs CMD with a fresh tmpfs at
# DIR -- of SIZE bytes, full (64 KiB, filled up) or read-only -- in a mount
# namespace of its own (unshare -rm: no root needed, nothing leaks out),
# then prints CMD's exit status and the files left in DIR.
set -u
if [ -z "${ON_SMALL_DISK_INSIDE:-}" ]; then
  ON_SMALL_DISK_INSIDE=1 exec unshare -rm sh "$0" "$@"
fi
dir=$1 kind=$2
shift 2
mkdir -p "$dir"
case $kind in
full) mount -t tmpfs -o size=64k tmpfs "$dir" &&
      { head -c 1048576 /dev/zero > "$dir/filler" 2>/dev/null; true; } ;;
ro) mount -t tmpfs -o ro,size=64k tmpfs "$dir" ;;
*) mount -t tmpfs -o "size=$kind" tmpfs "$dir" ;;
esac || exit 99
"$@"
echo "exit $?"
echo "left:" $(cd "$dir" && find . -mindepth 1 ! -name filler | sort)
