import FoundationEssentials

/// A QR code (ISO/IEC 18004) of some bytes, in byte mode: the picture the registration page shows
/// for an authenticator app, holding its `otpauth://` URI. The smallest version (1–40) that holds
/// the bytes at the chosen error correction level, Reed–Solomon blocks interleaved, the mask with
/// the lowest penalty (the standard's four rules), format and version information.
///
/// The level is ``ErrorCorrection/medium`` unless asked: a phone's camera reads it off a screen,
/// through glare and moiré, and M's 15 % recovery costs one version over L's 7 % for an
/// `otpauth` URI (160 bytes: version 9, 53 modules, instead of 8).
public struct QRCode: Sendable, Hashable {
    /// The error correction level: the share of codewords a reader can restore.
    public enum ErrorCorrection: Sendable, Hashable {
        /// L: about 7 %.
        case low
        /// M: about 15 %.
        case medium

        /// The two bits of the format information (ISO/IEC 18004 Table 12: L = 01, M = 00).
        fileprivate var formatBits: Int {
            switch self {
            case .low: 1
            case .medium: 0
            }
        }
    }

    /// The version (1–40): the symbol has `17 + 4 × version` modules a side.
    public let version: Int
    /// The level it was made at.
    public let errorCorrection: ErrorCorrection
    /// The mask pattern chosen (0–7).
    public let mask: Int
    /// Modules a side, without the quiet zone.
    public var size: Int { version * 4 + 17 }
    /// Row-major, `true` for a dark module.
    private let modules: [Bool]

    /// Whether the module at column `x`, row `y` (0-based, inside the symbol) is dark.
    public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }

    /// The most bytes byte mode holds at `errorCorrection` (version 40).
    public static func capacity(_ errorCorrection: ErrorCorrection) -> Int {
        (Self.dataCodewords(version: 40, errorCorrection) * 8 - 4 - 16) / 8
    }

    /// The code of `bytes`, at the smallest version from `minimumVersion` on that holds them.
    /// Throws ``QRCodeError/tooLong(byteCount:capacity:)`` when no version does (the error names
    /// counts, never the content: it may hold a secret).
    public init(bytes: [UInt8], errorCorrection: ErrorCorrection = .medium, minimumVersion: Int = 1) throws(QRCodeError) {
        guard (1...40).contains(minimumVersion) else { throw .noSuchVersion }
        guard
            let version = (minimumVersion...40).first(where: { version in
                let countBits = version <= 9 ? 8 : 16
                return 4 + countBits + bytes.count * 8 <= Self.dataCodewords(version: version, errorCorrection) * 8
            })
        else { throw .tooLong(byteCount: bytes.count, capacity: Self.capacity(errorCorrection)) }
        let data = Self.dataCodewords(bytes, version: version, errorCorrection)
        let codewords = Self.interleavedWithErrorCorrection(data, version: version, errorCorrection)
        var grid = Grid(version: version)
        grid.drawFunctionPatterns()
        grid.place(codewords)
        var best: (penalty: Int, mask: Int, grid: Grid)?
        for mask in 0..<8 {
            var candidate = grid
            candidate.apply(mask: mask)
            candidate.drawFormatBits(errorCorrection.formatBits, mask: mask)
            let penalty = candidate.penalty()
            if best.map({ penalty < $0.penalty }) ?? true { best = (penalty, mask, candidate) }
        }
        // Eight candidates were made above, so `best` is set.
        let chosen = best ?? (0, 0, grid)
        self.version = version
        self.errorCorrection = errorCorrection
        self.mask = chosen.mask
        self.modules = chosen.grid.dark
    }

    /// The code of `text`'s UTF-8 bytes.
    public init(text: String, errorCorrection: ErrorCorrection = .medium, minimumVersion: Int = 1) throws(QRCodeError) {
        try self.init(bytes: Array(text.utf8), errorCorrection: errorCorrection, minimumVersion: minimumVersion)
    }

    /// The code as an SVG image: one `<path>` of the dark modules on a white square, a quiet zone of
    /// four modules, `role="img"` and `aria-label` for a screen reader (`label`, escaped), each
    /// module `scale` pixels in the `width`/`height` attributes.
    public func svg(label: String, scale: Int = 4) -> String {
        let side = size + 8
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                let start = x
                while x < size, isDark(x: x, y: y) { x += 1 }
                path += "M\(start + 4) \(y + 4)h\(x - start)v1h-\(x - start)z"
            }
        }
        let pixels = side * max(scale, 1)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="\(HTML.escape(label))" \
            width="\(pixels)" height="\(pixels)" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }

    // MARK: Capacity tables (ISO/IEC 18004 Table 9), index = version

    /// Error correction codewords per block.
    private static let eccPerBlock: [ErrorCorrection: [Int]] = [
        .low: [
            0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        .medium: [
            0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28,
            28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
    ]

    /// Error correction blocks.
    private static let blockCount: [ErrorCorrection: [Int]] = [
        .low: [
            0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21,
            22, 24, 25,
        ],
        .medium: [
            0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38,
            40, 43, 45, 47, 49,
        ],
    ]

    /// Modules left for codewords (and remainder bits) once the function patterns are drawn.
    private static func rawDataModules(version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    private static func dataCodewords(version: Int, _ level: ErrorCorrection) -> Int {
        rawDataModules(version: version) / 8 - (eccPerBlock[level]?[version] ?? 0) * (blockCount[level]?[version] ?? 0)
    }

    // MARK: Codewords

    /// Mode indicator 0100 (byte), the count, the bytes, a terminator of up to four zero bits,
    /// zero bits to a byte boundary, then the pad bytes 0xEC 0x11 alternately.
    private static func dataCodewords(_ bytes: [UInt8], version: Int, _ level: ErrorCorrection) -> [UInt8] {
        let capacity = dataCodewords(version: version, level)
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, version <= 9 ? 8 : 16)
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, capacity * 8 - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var codewords = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { ($0 << 1) | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while codewords.count < capacity {
            codewords.append(pad)
            pad ^= 0xEC ^ 0x11
        }
        return codewords
    }

    /// The data split into blocks (the short ones first), each followed by its Reed–Solomon
    /// codewords, then read out column by column: data of every block, then error correction.
    private static func interleavedWithErrorCorrection(_ data: [UInt8], version: Int, _ level: ErrorCorrection) -> [UInt8] {
        let blocks = blockCount[level]?[version] ?? 1
        let eccLength = eccPerBlock[level]?[version] ?? 0
        let rawCodewords = rawDataModules(version: version) / 8
        let shortBlocks = blocks - rawCodewords % blocks
        let shortDataLength = rawCodewords / blocks - eccLength
        let generator = ReedSolomon.generator(degree: eccLength)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blocks {
            let length = shortDataLength + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(block, generator: generator))
        }
        var result: [UInt8] = []
        for column in 0..<(shortDataLength + 1) {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<eccLength {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }
}

/// Why no QR code was made.
public enum QRCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// More bytes than version 40 holds at the level.
    case tooLong(byteCount: Int, capacity: Int)
    /// A minimum version outside 1–40.
    case noSuchVersion

    public var description: String {
        switch self {
        case .tooLong(let count, let capacity): "\(count) bytes do not fit in a QR code (at most \(capacity) at this level)."
        case .noSuchVersion: "QR code versions are 1 to 40."
        }
    }
}

/// Reed–Solomon over GF(2⁸) with the QR code's polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D).
private enum ReedSolomon {
    /// a × b in the field.
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var result: UInt8 = 0
        var a = Int(a)
        var b = b
        while b != 0 {
            if b & 1 == 1 { result ^= UInt8(a) }
            a <<= 1
            if a & 0x100 != 0 { a ^= 0x11D }
            b >>= 1
        }
        return result
    }

    /// The generator polynomial (x − α⁰)(x − α¹)…(x − α^(degree−1)), its coefficients from the
    /// highest power down, the leading 1 left out.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                coefficients[index] = multiply(coefficients[index], root)
                if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return coefficients
    }

    /// The remainder of data × x^degree divided by the generator: the error correction codewords.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(generator[index], factor) }
        }
        return result
    }
}

/// The module grid while it is drawn: which modules are dark, which belong to function patterns.
private struct Grid {
    let version: Int
    let size: Int
    var dark: [Bool]
    var function: [Bool]

    init(version: Int) {
        self.version = version
        size = version * 4 + 17
        dark = Array(repeating: false, count: size * size)
        function = Array(repeating: false, count: size * size)
    }

    subscript(x: Int, y: Int) -> Bool {
        get { dark[y * size + x] }
        set { dark[y * size + x] = newValue }
    }

    mutating func setFunction(_ x: Int, _ y: Int, _ isDark: Bool) {
        dark[y * size + x] = isDark
        function[y * size + x] = true
    }

    /// Finders with their separators, timing, alignment patterns, the dark module, and the format
    /// and version areas (reserved now, written per mask).
    mutating func drawFunctionPatterns() {
        for index in 0..<size {
            setFunction(6, index, index % 2 == 0)
            setFunction(index, 6, index % 2 == 0)
        }
        drawFinder(3, 3)
        drawFinder(size - 4, 3)
        drawFinder(3, size - 4)
        let positions = alignmentPositions()
        for (i, x) in positions.enumerated() {
            for (j, y) in positions.enumerated() {
                let last = positions.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { setFunction(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormatBits(0, mask: 0)
        drawVersion()
    }

    /// A finder centred at (x, y) and its light separator, clipped to the symbol.
    private mutating func drawFinder(_ x: Int, _ y: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let (px, py) = (x + dx, y + dy)
                guard (0..<size).contains(px), (0..<size).contains(py) else { continue }
                let distance = max(abs(dx), abs(dy))
                setFunction(px, py, distance != 2 && distance != 4)
            }
        }
    }

    /// The centres of the alignment patterns along each axis (ISO/IEC 18004 Annex E).
    private func alignmentPositions() -> [Int] {
        guard version > 1 else { return [] }
        let count = version / 7 + 2
        let step = (version * 8 + count * 3 + 5) / (count * 4 - 4) * 2
        var positions = [6]
        for index in 0..<(count - 1) { positions.insert(size - 7 - index * step, at: 1) }
        return positions
    }

    /// The 15 format bits (level and mask, BCH(15,5), XOR 0x5412), twice, and the dark module.
    mutating func drawFormatBits(_ level: Int, mask: Int) {
        let data = level << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { setFunction(8, index, bit(index)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for index in 9..<15 { setFunction(14 - index, 8, bit(index)) }
        for index in 0..<8 { setFunction(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { setFunction(8, size - 15 + index, bit(index)) }
        setFunction(8, size - 8, true)
    }

    /// The 18 version bits (BCH(18,6)) in the two 6 × 3 blocks, from version 7 on.
    private mutating func drawVersion() {
        guard version >= 7 else { return }
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        let bits = version << 12 | remainder
        for index in 0..<18 {
            let isDark = (bits >> index) & 1 == 1
            let a = size - 11 + index % 3
            let b = index / 3
            setFunction(a, b, isDark)
            setFunction(b, a, isDark)
        }
    }

    /// The codewords' bits, most significant first, in the two-column zigzag from the bottom right,
    /// skipping function modules and the vertical timing column; remainder bits stay light.
    mutating func place(_ codewords: [UInt8]) {
        var index = 0
        let total = codewords.count * 8
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for column in 0..<2 {
                    let x = right - column
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !function[y * size + x], index < total else { continue }
                    self[x, y] = (codewords[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                    index += 1
                }
            }
            right -= 2
        }
    }

    /// Inverts the data modules where mask pattern `mask` (ISO/IEC 18004 Table 10) says so.
    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !function[y * size + x] {
                let invert: Bool =
                    switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                if invert { self[x, y].toggle() }
            }
        }
    }

    /// The penalty of ISO/IEC 18004 §7.8.3: runs of five or more (3 + the excess), 2 × 2 blocks
    /// (3 each), finder-like 1:1:3:1:1 patterns with four light modules on a side, the quiet zone
    /// counting as light (40 each), and 10 for every full 5 % the dark share strays from half.
    func penalty() -> Int {
        var result = 0
        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        let light4 = [Bool](repeating: false, count: 4)
        let patterns = [light4 + finderLike, finderLike + light4]
        for line in 0..<size {
            let row = (0..<size).map { self[$0, line] }
            let column = (0..<size).map { self[line, $0] }
            for modules in [row, column] {
                var run = 1
                for index in 1..<size {
                    if modules[index] == modules[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { result += run - 2 }
                        run = 1
                    }
                }
                if run >= 5 { result += run - 2 }
                // The quiet zone is light: a finder-like pattern against the edge counts too.
                let padded = light4 + modules + light4
                for start in 0...(padded.count - 11) {
                    let window = Array(padded[start..<start + 11])
                    for pattern in patterns where window == pattern { result += 40 }
                }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = self[x, y]
                if self[x + 1, y] == colour, self[x, y + 1] == colour, self[x + 1, y + 1] == colour { result += 3 }
            }
        }
        let darkCount = dark.filter { $0 }.count
        let total = size * size
        result += abs(darkCount * 2 - total) * 10 / total * 10
        return result
    }
}
