"""Key codes as SOFA's keyboard events carry them: arrows are chr(18) to chr(21), letters their
upper-case character, keypad digits the digit's character."""

import string as _string

leftarrow = chr(18)
uparrow = chr(19)
rightarrow = chr(20)
downarrow = chr(21)
escape = chr(27)
space = " "
plus = "+"
minus = "-"

globals().update({c: c for c in _string.ascii_uppercase})
globals().update({"KP_%d" % d: str(d) for d in range(10)})
