{
  "targets": [
    {
      "target_name": "psk_kernels",
      "sources": ["psk-kernels.c", "psk-conv.c", "psk-pool.c", "wasm-grads.c", "psk-elementwise.c", "psk-commit.c", "psk-sha.c", "psk-napi.c"],
      "cflags": ["-O3", "-ffp-contract=off", "-fno-fast-math", "-fno-unsafe-math-optimizations", "-Wno-psabi", "-std=c11", "-pthread"],
      "ldflags": ["-pthread"],
      "libraries": ["-ldl"]
    }
  ]
}
