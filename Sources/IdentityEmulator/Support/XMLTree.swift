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
        var reader = Reader(bytes: bytes, limits: limits)
        elements = try reader.read()
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

    /// The reader's cursor over the document and the elements built so far. Each part of the
    /// document (the declaration, text, a start tag and its attributes, an end tag) is one method
    /// that starts at ``index`` and leaves it after what it read; a failure names the offset where
    /// the part went wrong.
    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        /// The next byte to read.
        var index = 0
        /// Every element read so far, in document order.
        var elements: [Element] = []
        /// The elements whose end tag is still to come, innermost last.
        var open: [Int] = []
        /// The root element has ended: only white space may follow.
        var rootClosed = false

        /// The document's length in bytes: every read stops there.
        var count: Int { bytes.count }

        /// The whole document: an optional declaration, then text and tags until the end, which
        /// must close the one root element.
        mutating func read() throws(Failure) -> [Element] {
            skipSpace()
            try skipDeclaration()
            while index < count {
                if bytes[index] != XMLTree.lessThan {
                    try readText()
                    continue
                }
                guard index + 1 < count else { throw .malformed(at: index) }
                let next = bytes[index + 1]
                // `<!` (DOCTYPE, comment, CDATA) and `<?` (a processing instruction) are refused.
                if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { throw .unsupported(at: index) }
                if next == XMLTree.slash {
                    try readEndTag()
                } else {
                    try readStartTag()
                }
            }
            guard rootClosed, open.isEmpty, !elements.isEmpty else { throw .malformed(at: count) }
            return elements
        }

        /// Moves past white space (XML's four characters), which separates names and attributes.
        mutating func skipSpace() {
            while index < count, XMLTree.isSpace(bytes[index]) { index += 1 }
        }

        /// Whether the bytes at `offset` spell `literal` (false when the document ends first).
        func starts(with literal: String, at offset: Int) -> Bool {
            let literalBytes = Array(literal.utf8)
            return offset + literalBytes.count <= count && Array(bytes[offset..<offset + literalBytes.count]) == literalBytes
        }

        /// An element or attribute name: at least one byte, at most 256, so a name cannot grow
        /// without bound.
        mutating func name() throws(Failure) -> String {
            let start = index
            while index < count, XMLTree.isNameByte(bytes[index]) { index += 1 }
            guard index > start, index - start <= 256 else { throw .malformed(at: start) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// `<?xml … ?>`, the one processing instruction allowed, and only first: skipped unread.
        mutating func skipDeclaration() throws(Failure) {
            guard starts(with: "<?xml", at: index) else { return }
            var end = index + 5
            while end + 1 < count, !(bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == XMLTree.greaterThan) { end += 1 }
            guard end + 1 < count else { throw .malformed(at: index) }
            index = end + 2
        }

        /// Character data up to the next `<`: the open element's text, decoded; outside the root,
        /// only white space is allowed.
        mutating func readText() throws(Failure) {
            let start = index
            while index < count, bytes[index] != XMLTree.lessThan { index += 1 }
            guard let parent = open.last else {
                guard bytes[start..<index].allSatisfy(XMLTree.isSpace) else { throw .malformed(at: start) }
                return
            }
            elements[parent].text += try XMLTree.decode(bytes[start..<index], offset: start)
        }

        /// `</name>`: it must close the innermost open element, whose range then ends here.
        mutating func readEndTag() throws(Failure) {
            let tagStart = index
            index += 2
            let closing = try name()
            skipSpace()
            guard index < count, bytes[index] == XMLTree.greaterThan, let current = open.popLast(), elements[current].name == closing
            else { throw .malformed(at: tagStart) }
            index += 1
            elements[current].range = elements[current].range.lowerBound..<index
            if open.isEmpty { rootClosed = true }
        }

        /// `<name attributes>` or `<name attributes/>`: a new element, the child of the innermost
        /// open one. Only one root is allowed, and the counts and depth stay within the limits.
        mutating func readStartTag() throws(Failure) {
            let tagStart = index
            guard !rootClosed else { throw .malformed(at: tagStart) }
            index += 1
            let elementName = try name()
            let (attributes, selfClosing) = try readAttributes(tagStart: tagStart)
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

        /// A start tag's attributes up to its `>` or `/>` (whether it was `/>`): each name once,
        /// no more than ``Limits/attributesPerElement``.
        mutating func readAttributes(tagStart: Int) throws(Failure) -> (attributes: [(name: String, value: String)], selfClosing: Bool) {
            var attributes: [(name: String, value: String)] = []
            while true {
                skipSpace()
                guard index < count else { throw .malformed(at: tagStart) }
                if bytes[index] == XMLTree.greaterThan {
                    index += 1
                    return (attributes, false)
                }
                if bytes[index] == XMLTree.slash {
                    guard index + 1 < count, bytes[index + 1] == XMLTree.greaterThan else { throw .malformed(at: index) }
                    index += 2
                    return (attributes, true)
                }
                let attributeName = try name()
                let (value, valueStart) = try readAttributeValue()
                guard !attributes.contains(where: { $0.name == attributeName }) else { throw .malformed(at: valueStart) }
                attributes.append((name: attributeName, value: value))
                guard attributes.count <= limits.attributesPerElement else { throw .tooLarge }
            }
        }

        /// `= "value"` or `= 'value'` after an attribute's name: the value decoded, and the offset
        /// it starts at. A `<` inside is refused, as XML does.
        mutating func readAttributeValue() throws(Failure) -> (value: String, start: Int) {
            skipSpace()
            guard index < count, bytes[index] == XMLTree.equals else { throw .malformed(at: index) }
            index += 1
            skipSpace()
            guard index < count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw .malformed(at: index)
            }
            let quote = bytes[index]
            index += 1
            let valueStart = index
            while index < count, bytes[index] != quote {
                guard bytes[index] != XMLTree.lessThan else { throw .malformed(at: index) }
                index += 1
            }
            guard index < count else { throw .malformed(at: valueStart) }
            let value = try XMLTree.decode(bytes[valueStart..<index], offset: valueStart)
            index += 1
            return (value, valueStart)
        }
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

/// Escaping for XML text and attribute values written by the emulator: HTML's (its `&#39;` is
/// XML too).
enum XMLText {
    static func escape(_ value: String) -> String { HTML.escape(value) }
}
