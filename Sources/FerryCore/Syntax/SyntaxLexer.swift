/// A token of one of ferry's small languages (predicates, value expressions).
protocol SyntaxToken {
    /// Byte offset of the token's first byte.
    var offset: Int { get }
    /// The token's source text.
    var text: String { get }
    /// True for the end of input.
    var isEnd: Bool { get }
    /// True for a string literal (named by its quoted text in messages).
    var isString: Bool { get }
}

extension SyntaxToken {
    /// How the token is named in a message: `'foo'`, `"text"`, `end of input`.
    var described: String {
        if isEnd { return "end of input" }
        return isString ? text : "'\(text)'"
    }
}

/// The lexer core both languages share: each lexer reads one token at a time with a
/// ``TokenScanner``; collecting them within ``SyntaxLimits/maximumTokens`` is done once, here.
protocol SyntaxLexer {
    associatedtype Token: SyntaxToken
    /// `predicate` or `expression`, for messages.
    static var language: String { get }
    /// The next token (the end token at the end of input).
    mutating func next() throws(FerryError) -> Token
    /// An error about the text at byte `offset`.
    func error(_ message: String, at offset: Int) -> FerryError
}

extension SyntaxLexer {
    /// Every token, ending with the end token; at most ``SyntaxLimits/maximumTokens`` of them.
    mutating func tokenize() throws(FerryError) -> [Token] {
        var tokens: [Token] = []
        while true {
            let token = try next()
            if tokens.count == SyntaxLimits.maximumTokens, !token.isEnd {
                throw error(SyntaxLimits.tooLong(Self.language), at: token.offset)
            }
            tokens.append(token)
            if token.isEnd { return tokens }
        }
    }
}
