"""Key codes as SOFA's events give them (arrows are chr(18) to chr(21))."""
leftarrow = chr(18)
uparrow = chr(19)
rightarrow = chr(20)
downarrow = chr(21)
escape = chr(27)
space = " "
plus = "+"
minus = "-"
