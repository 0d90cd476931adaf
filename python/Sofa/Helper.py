"""Sofa.Helper: messages (msg_info…, MessageHandler), version, file repositories."""

import os
import sys

_handlers = []


def _emit(kind, text, sender="PythonScript", component=None):
    kind = {"error": "Error", "warning": "Warning", "info": "Info"}.get(kind, kind)
    msg = {"type": kind, "sender": sender, "component": component, "message": text}
    if _handlers:
        _handlers[-1].process(msg)
        return
    if component is not None and hasattr(component, "_log"):
        component._log(text)
    sys.stderr.write("[%s] [%s] %s\n" % (kind.upper(), sender, text))


def _message(kind, *args):
    component = None
    sender = "PythonScript"
    args = list(args)
    if args and not isinstance(args[0], str):
        component = args.pop(0)
        sender = component.getName() if hasattr(component, "getName") else str(component)
        if hasattr(component, "_log") and len(args) >= 1:
            component._log(str(args[0]))
    elif len(args) >= 2 and isinstance(args[1], str) and not (len(args) == 3 and isinstance(args[2], int)):
        sender = args.pop(0)
    text = str(args[0]) if args else ""
    if len(args) >= 3:
        text = "%s (%s:%s)" % (text, args[1], args[2])
    if component is not None and hasattr(component, "_log"):
        # logged on the component; also shown
        if not _handlers:
            sys.stderr.write("[%s] [%s] %s\n" % (kind.upper(), sender, text))
            return
    _emit(kind, text, sender, None if component is None else component)


def msg_info(*args):
    _message("Info", *args)


def msg_warning(*args):
    _message("Warning", *args)


def msg_error(*args):
    _message("Error", *args)


def msg_deprecated(*args):
    _message("Deprecated", *args)


def msg_fatal(*args):
    _message("Fatal", *args)


class MessageHandler:
    """Receives the messages while it is active (`with MyHandler() as h:`), in `process(msg)`
    with a dict: type, sender, component, message."""

    def __init__(self):
        pass

    def process(self, msg):
        pass

    def __enter__(self):
        _handlers.append(self)
        return self

    def __exit__(self, *exc):
        if self in _handlers:
            _handlers.remove(self)
        return False


def GetVersion():
    """The SOFA release whose scenes and API this Canapé follows, as SOFA writes it."""
    return "v25.06"


class _FileRepository:
    def __init__(self, env=None):
        self._paths = []
        if env and os.environ.get(env):
            self._paths += os.environ[env].split(os.pathsep)

    def addFirstPath(self, p):
        self._paths.insert(0, p)

    def addLastPath(self, p):
        self._paths.append(p)

    def removePath(self, p):
        if p in self._paths:
            self._paths.remove(p)

    def clear(self):
        self._paths = []

    def getPaths(self):
        return list(self._paths)

    def getPathsJoined(self):
        return os.pathsep.join(self._paths)

    def findFile(self, name, basedir="", ostream=None):
        return self.getFile(name, basedir) != ""

    def getFile(self, name, basedir=""):
        for d in ([basedir] if basedir else []) + self._paths + [os.getcwd()]:
            p = os.path.join(d, name)
            if os.path.exists(p):
                return p
        return ""


class System:
    FileRepository = _FileRepository
    DataRepository = _FileRepository("SOFA_DATA_PATH")
    PluginRepository = _FileRepository("SOFA_PLUGIN_PATH")
