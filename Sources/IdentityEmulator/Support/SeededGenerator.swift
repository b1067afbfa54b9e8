/// SplitMix64: a small, fast generator whose output depends only on its seed, so `--seed S`
/// always builds the same directory and draws the same faults. Sesame's one seeded generator:
/// the fuzzer and the tests that draw failures use it too (public for them), so a seed means
/// the same sequence everywhere. Not for secrets: the output is predictable by design.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// A seed from text (its FNV-1a hash): the same word always gives the same directory.
    public init(seed text: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        state = hash
    }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A GUID in the usual lower-case 8-4-4-4-12 form, version 4 bits set.
    mutating func guid() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in stride(from: 0, to: 16, by: 8) {
            var word = next()
            for offset in 0..<8 {
                bytes[index + offset] = UInt8(truncatingIfNeeded: word)
                word >>= 8
            }
        }
        return Identifiers.format(guidBytes: bytes)
    }
}
