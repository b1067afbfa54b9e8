/// The layout every question window of Sesame's shares, as GNOME's dialogs have it: the icon
/// beside the texts, the buttons at the end (the last one the default), and closing the window
/// or Escape answers nothing (`dismiss`).
@MainActor
enum QuestionLayout {
    static func arrange(_ window: Window, icon: Widget, texts: Box, buttons: [Widget], dismiss: @escaping @MainActor () -> Void) {
        let top = Box(vertical: false, spacing: 16)
        top.pack(icon)
        top.pack(texts, expand: true)
        let row = Box(vertical: false, spacing: 8)
        row.pack(Box(vertical: false), expand: true)
        for button in buttons { row.pack(button) }
        let content = Box(vertical: true, spacing: 18)
        content.setMargin(18)
        content.pack(top, expand: true)
        content.pack(row)
        window.setContent(content)
        window.onCloseRequest {
            dismiss()
            return true
        }
        window.onKeyPress { key in
            guard key.key == KeyPress.escape else { return false }
            dismiss()
            return true
        }
    }
}
