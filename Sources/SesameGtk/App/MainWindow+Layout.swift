import FoundationEssentials
import SesameSamples
import SesameWindowModel

extension MainWindow {
    /// The header (the samples' switcher, the account menu), the bars, the samples or the sign-in
    /// page, and the inspector's pane.
    func layOut() {
        window.setTitlebar(header.bar)
        mainStack.add(samples.stack, name: "samples")
        mainStack.add(signIn.root, name: "sign-in")
        let content = Box(vertical: true, spacing: 0)
        if let settingsNotice { content.pack(settingsNotice.root) }
        content.pack(offlineBar.root)
        content.pack(errorBar.root)
        content.pack(mainStack, expand: true)
        // The inspector is never cut off: the handle stops where its narrowest layout begins.
        let panes = Paned(content, inspectorSlot, position: 660, resizeEnd: true, shrinkEnd: false)
        self.panes = panes
        window.setContent(panes)
        header.bar.showAll()
        panes.showAll()
        errorBar.root.hide()
    }
}
