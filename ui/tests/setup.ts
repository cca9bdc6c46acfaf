// Times render in the reader's zone; tests read them in UTC so expectations are fixed.
process.env.TZ = "UTC";
