"""SofaTypes: not built yet in Canapé (SofaPython3's Vec/Mat/Quat value types); importing it
works so that scenes that import it without using it run."""
