"""Sofa.Gui: runSofa's GUI manager, mapped onto Canapé's browser viewer (`canape.view`)."""


class GUIManager:
    _size = (800, 600)
    _root = None

    @staticmethod
    def Init(program_name="", gui_name="", *args):
        return 0

    @staticmethod
    def ListSupportedGUI(separator=" "):
        return "canape-view"

    @staticmethod
    def GetGUIName():
        return "canape-view"

    @staticmethod
    def createGUI(root, filename=""):
        GUIManager._root = root
        return 0

    @staticmethod
    def SetDimension(width, height):
        GUIManager._size = (width, height)

    @staticmethod
    def SetFullScreen():
        pass

    @staticmethod
    def MainLoop(root=None, filename=""):
        """Show the scene in the browser viewer until Ctrl-C."""
        import canape

        canape.view(root if root is not None else GUIManager._root, block=True)
        return 0

    @staticmethod
    def closeGUI():
        GUIManager._root = None
