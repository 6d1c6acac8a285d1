#pragma once
// Tile status words for the decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix
// Scan with Decoupled Look-back", 2016). Each tile publishes its aggregate (flag A) as soon as it
// has scanned its own items, and its inclusive prefix (flag P) once it knows the prefix before it.
//
// Memory ordering:
//  * 32-bit accumulators pack (flag, value) into one 64-bit word, written and read with single
//    64-bit relaxed atomics at device scope: a reader sees the flag and its value together or the
//    old word, so no fence is needed, and the atomic (not cached in L1) load sees other SMs' stores.
//  * 64-bit accumulators pack (flag, value) into one 16-byte word, written and read with single
//    128-bit relaxed accesses at device scope (PTX st / ld .relaxed.gpu.b128: one scalar access, so
//    single-copy atomic as the 64-bit word above; sm_70 and PTX ISA 8.3, CUDA 12.3). Until session
//    44 they kept a separate flag (release / acquire) and two value slots: each look-back step then
//    waited for two dependent loads, and the acquire.
// The words start zeroed (flag "invalid") for every launch: the driver memsets them in the launch's
// stream-ordered scratch, which also keeps the scheme correct inside CUDA graphs.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <cuda/atomic>

namespace gpuprims {
namespace scan_detail {

enum TileFlag : uint32_t { kTileInvalid = 0, kTileAggregate = 1, kTileInclusive = 2 };

template <class Acc, bool kPacked = (sizeof(Acc) == 4)>
struct TileStatus;

template <class Acc>
struct TileStatus<Acc, true> {
  unsigned long long* words;

  static std::size_t bytes(int64_t tiles) { return std::size_t(tiles) * sizeof(unsigned long long); }
  static TileStatus at(void* base, int64_t /*tiles*/) { return {static_cast<unsigned long long*>(base)}; }

  __device__ void publish(int64_t tile, TileFlag flag, Acc value) const {
    uint32_t bits;
    memcpy(&bits, &value, sizeof(bits));
    const unsigned long long word = (static_cast<unsigned long long>(flag) << 32) | bits;
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).store(word, cuda::memory_order_relaxed);
  }
  __device__ TileFlag read(int64_t tile, Acc* value) const {
    const unsigned long long word =
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).load(cuda::memory_order_relaxed);
    const uint32_t bits = static_cast<uint32_t>(word);
    memcpy(value, &bits, sizeof(bits));
    return static_cast<TileFlag>(word >> 32);
  }
};

template <class Acc>
struct TileStatus<Acc, false> {
  static_assert(sizeof(Acc) == 8, "64-bit accumulators share a 16-byte word with their flag");
  struct alignas(16) Word {
    unsigned long long flag, bits;
  };
  Word* words;

  static std::size_t bytes(int64_t tiles) { return std::size_t(tiles) * sizeof(Word); }
  static TileStatus at(void* base, int64_t /*tiles*/) { return {static_cast<Word*>(base)}; }

  __device__ void publish(int64_t tile, TileFlag flag, Acc value) const {
    unsigned long long bits;
    memcpy(&bits, &value, sizeof(bits));
    const unsigned long long flag_bits = flag;
    asm volatile(
        "{\n\t.reg .b128 word;\n\tmov.b128 word, {%1, %2};\n\tst.relaxed.gpu.global.b128 [%0], word;\n\t}"
        :
        : "l"(words + tile), "l"(flag_bits), "l"(bits)
        : "memory");
  }
  __device__ TileFlag read(int64_t tile, Acc* value) const {
    unsigned long long flag_bits, bits;
    asm volatile(
        "{\n\t.reg .b128 word;\n\tld.relaxed.gpu.global.b128 word, [%2];\n\tmov.b128 {%0, %1}, word;\n\t}"
        : "=l"(flag_bits), "=l"(bits)
        : "l"(words + tile)
        : "memory");
    memcpy(value, &bits, sizeof(bits));
    return static_cast<TileFlag>(flag_bits);
  }
};

// Counts (stream compaction): values below 2^62 share one 64-bit word with the flag (top two bits),
// so even 64-bit counts publish and read with a single relaxed atomic, as the packed case above.
struct CountStatus {
  unsigned long long* words;

  static std::size_t bytes(int64_t tiles) { return std::size_t(tiles) * sizeof(unsigned long long); }
  static CountStatus at(void* base, int64_t /*tiles*/) { return {static_cast<unsigned long long*>(base)}; }

  __device__ void publish(int64_t tile, TileFlag flag, int64_t count) const {
    const unsigned long long word = (static_cast<unsigned long long>(flag) << 62) | static_cast<unsigned long long>(count);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).store(word, cuda::memory_order_relaxed);
  }
  __device__ TileFlag read(int64_t tile, int64_t* count) const {
    const unsigned long long word =
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).load(cuda::memory_order_relaxed);
    *count = static_cast<int64_t>(word & ((1ull << 62) - 1));
    return static_cast<TileFlag>(word >> 62);
  }
};

}  // namespace scan_detail
}  // namespace gpuprims
