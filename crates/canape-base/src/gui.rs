//! What the viewer adds to a scene: the mouse spring (`mouse`).

pub mod mouse;
