/// A small, bounded reader of the XML a WS-Federation answer carries (`wresult`): elements,
/// attributes and text, each element with the byte range it was written in, so a signature can be
/// checked over the exact bytes that were signed.
///
/// The input comes from a browser's form post, so it is hostile: the reader is iterative (no
/// recursion to exhaust), bounded in size, depth, element and attribute counts, and refuses what
/// the answer never needs and attacks use — a DOCTYPE (entity expansion, external entities),
/// comments, CDATA and processing instructions other than the XML declaration. Only the five
/// predefined entities and character references are decoded. Names are kept as written (`saml:Assertion`);
/// namespaces are not resolved, so lookups go by local name.
struct XMLTree: Sendable {
    /// One element: its name, attributes, direct text and children.
    struct Element: Sendable {
        /// The qualified name as written, e.g. `saml:Assertion`.
        let name: String
        /// The name after any prefix, e.g. `Assertion`.
        var localName: Substring { name.split(separator: ":", maxSplits: 1).last ?? Substring(name) }
        /// The attributes in document order, values decoded.
        var attributes: [(name: String, value: String)]
        /// The element's own text (character data directly inside it), decoded.
        var text: String
        /// The indexes of its child elements in ``XMLTree/elements``.
        var children: [Int]
        /// The bytes of the whole element, from `<` of its start tag to `>` of its end tag.
        var range: Range<Int>

        /// An attribute's value by its name as written (no prefix for the SAML attributes).
        func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
    }

    /// Why an input is refused.
    enum Failure: Error, Equatable {
        /// Larger than ``Limits/bytes``, deeper than ``Limits/depth``, or more elements or
        /// attributes than allowed.
        case tooLarge
        /// Not well-formed (the byte offset where reading stopped).
        case malformed(at: Int)
        /// A DOCTYPE, comment, CDATA section or processing instruction.
        case unsupported(at: Int)
    }

    /// How much the reader accepts.
    struct Limits: Sendable {
        var bytes = 64 * 1024
        var depth = 32
        var elements = 1024
        var attributesPerElement = 32
    }

    /// The document's bytes (UTF-8).
    let bytes: [UInt8]
    /// Every element in document order; the first is the root.
    private(set) var elements: [Element] = []

    /// The root element.
    var root: Element { elements[0] }

    /// Reads `text`.
    init(parsing text: String, limits: Limits = Limits()) throws(Failure) {
        bytes = Array(text.utf8)
        guard bytes.count <= limits.bytes else { throw .tooLarge }
        try read(limits: limits)
    }

    /// The elements under `element` (any depth, document order) whose local name is `localName`.
    func descendants(of element: Element, named localName: String) -> [Element] {
        var found: [Element] = []
        var pending = Array(element.children.reversed())
        while let index = pending.popLast() {
            let child = elements[index]
            if child.localName == localName { found.append(child) }
            pending.append(contentsOf: child.children.reversed())
        }
        return found
    }

    /// The direct children of `element` whose local name is `localName`.
    func children(of element: Element, named localName: String) -> [Element] {
        element.children.map { elements[$0] }.filter { $0.localName == localName }
    }

    /// The bytes of `range`.
    func bytes(in range: Range<Int>) -> ArraySlice<UInt8> { bytes[range] }

    // MARK: Reading

    private static let lessThan = UInt8(ascii: "<")
    private static let greaterThan = UInt8(ascii: ">")
    private static let slash = UInt8(ascii: "/")
    private static let equals = UInt8(ascii: "=")
    private static let ampersand = UInt8(ascii: "&")

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        !isSpace(byte) && byte != lessThan && byte != greaterThan && byte != slash && byte != equals
            && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'") && byte != ampersand
    }

    private mutating func read(limits: Limits) throws(Failure) {
        let bytes = self.bytes
        var index = 0
        let count = bytes.count
        func skipSpace() {
            while index < count, Self.isSpace(bytes[index]) { index += 1 }
        }
        func starts(with literal: String, at offset: Int) -> Bool {
            let literalBytes = Array(literal.utf8)
            return offset + literalBytes.count <= count && Array(bytes[offset..<offset + literalBytes.count]) == literalBytes
        }
        func name() throws(Failure) -> String {
            let start = index
            while index < count, Self.isNameByte(bytes[index]) { index += 1 }
            guard index > start, index - start <= 256 else { throw .malformed(at: start) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        skipSpace()
        if starts(with: "<?xml", at: index) {
            var end = index + 5
            while end + 1 < count, !(bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == Self.greaterThan) { end += 1 }
            guard end + 1 < count else { throw .malformed(at: index) }
            index = end + 2
        }

        var open: [Int] = []
        var rootClosed = false
        while index < count {
            if bytes[index] != Self.lessThan {
                let start = index
                while index < count, bytes[index] != Self.lessThan { index += 1 }
                guard let parent = open.last else {
                    guard bytes[start..<index].allSatisfy(Self.isSpace) else { throw .malformed(at: start) }
                    continue
                }
                elements[parent].text += try Self.decode(bytes[start..<index], offset: start)
                continue
            }
            let tagStart = index
            guard index + 1 < count else { throw .malformed(at: index) }
            let next = bytes[index + 1]
            if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { throw .unsupported(at: index) }
            if next == Self.slash {
                index += 2
                let closing = try name()
                skipSpace()
                guard index < count, bytes[index] == Self.greaterThan, let current = open.popLast(), elements[current].name == closing
                else { throw .malformed(at: tagStart) }
                index += 1
                elements[current].range = elements[current].range.lowerBound..<index
                if open.isEmpty { rootClosed = true }
                continue
            }
            guard !rootClosed else { throw .malformed(at: tagStart) }
            index += 1
            let elementName = try name()
            var attributes: [(name: String, value: String)] = []
            var selfClosing = false
            while true {
                skipSpace()
                guard index < count else { throw .malformed(at: tagStart) }
                if bytes[index] == Self.greaterThan {
                    index += 1
                    break
                }
                if bytes[index] == Self.slash {
                    guard index + 1 < count, bytes[index + 1] == Self.greaterThan else { throw .malformed(at: index) }
                    index += 2
                    selfClosing = true
                    break
                }
                let attributeName = try name()
                skipSpace()
                guard index < count, bytes[index] == Self.equals else { throw .malformed(at: index) }
                index += 1
                skipSpace()
                guard index < count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                    throw .malformed(at: index)
                }
                let quote = bytes[index]
                index += 1
                let valueStart = index
                while index < count, bytes[index] != quote {
                    guard bytes[index] != Self.lessThan else { throw .malformed(at: index) }
                    index += 1
                }
                guard index < count else { throw .malformed(at: valueStart) }
                let value = try Self.decode(bytes[valueStart..<index], offset: valueStart)
                index += 1
                guard !attributes.contains(where: { $0.name == attributeName }) else { throw .malformed(at: valueStart) }
                attributes.append((name: attributeName, value: value))
                guard attributes.count <= limits.attributesPerElement else { throw .tooLarge }
            }
            guard elements.count < limits.elements else { throw .tooLarge }
            let element = Element(name: elementName, attributes: attributes, text: "", children: [], range: tagStart..<index)
            let position = elements.count
            elements.append(element)
            if let parent = open.last { elements[parent].children.append(position) }
            if selfClosing {
                if open.isEmpty { rootClosed = true }
            } else {
                open.append(position)
                guard open.count <= limits.depth else { throw .tooLarge }
            }
        }
        guard rootClosed, open.isEmpty, !elements.isEmpty else { throw .malformed(at: count) }
    }

    /// Character data or an attribute value with its references replaced.
    private static func decode(_ slice: ArraySlice<UInt8>, offset: Int) throws(Failure) -> String {
        guard slice.contains(ampersand) else { return String(decoding: slice, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(slice.count)
        var index = slice.startIndex
        while index < slice.endIndex {
            let byte = slice[index]
            guard byte == ampersand else {
                out.append(byte)
                index += 1
                continue
            }
            guard let semicolon = slice[index..<min(slice.endIndex, index + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                throw .malformed(at: index)
            }
            let reference = String(decoding: slice[(index + 1)..<semicolon], as: UTF8.self)
            let scalar: Unicode.Scalar?
            switch reference {
            case "amp": scalar = "&"
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if reference.hasPrefix("#x"), let value = UInt32(reference.dropFirst(2), radix: 16) {
                    scalar = Unicode.Scalar(value)
                } else if reference.hasPrefix("#"), reference.count > 1, let value = UInt32(reference.dropFirst(), radix: 10) {
                    scalar = Unicode.Scalar(value)
                } else {
                    scalar = nil
                }
            }
            guard let scalar, scalar.value != 0 else { throw .malformed(at: index) }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
            index = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Escaping for XML text and attribute values written by the emulator.
enum XMLText {
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
