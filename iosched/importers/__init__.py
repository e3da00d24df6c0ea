"""Readers of external formats, one module per format (``darshan``: Darshan I/O characterisation
logs). A reader turns a file into plain data; each problem's instances module maps that data to an
instance (``iosched.instances.<problem>.from_darshan``)."""
