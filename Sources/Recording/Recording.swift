// Recording module: the session store on the SD card (see DESIGN.md, "Storage on the SD card").
//   SessionStore      create / list (with recovery) / open / delete sessions under a root
//   SessionRecorder   the per-session writer: bounded ring, writer thread, fsync cadence
//   FrameLog/EventLog the append-only checksummed log formats
//   FaceSchema        canonical names shared with Export and the tracker
