#!/bin/sh
# Open MPI's rsh agent for hosts that are network namespaces (hosts.py):
# `netns-rsh.sh HOST COMMAND...` runs COMMAND in HOST's namespace, as ssh
# would run it on HOST. DPC_NETNS_HOSTS maps addresses to namespaces
# ("10.200.0.1=NS0 10.200.0.2=NS1").
host=$1
shift
for pair in $DPC_NETNS_HOSTS; do
  if [ "${pair%%=*}" = "$host" ]; then
    exec ip netns exec "${pair#*=}" /bin/sh -c "$*"
  fi
done
echo "netns-rsh.sh: no namespace for host '$host'" >&2
exit 255
