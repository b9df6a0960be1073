# Sourced by tools/gpu/run.sh and check.sh: puts the GPU machine's own
# cuBLAS, cuDNN and NCCL (a toolkit's, or pip's wheels) and the bundle's
# libraries ($work/lib) on LD_LIBRARY_PATH.
libdirs=$work/lib
for name in libcublas.so.13 libcudnn.so.9 libnccl.so.2; do
  found=$(find /usr/local /usr/lib /opt -name "$name" 2>/dev/null | head -1)
  [[ -n $found ]] && libdirs=$libdirs:$(dirname "$found") ||
    echo "$name not found on this machine"
done
export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
