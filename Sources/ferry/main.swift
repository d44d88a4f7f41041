import FerryCommandLine

FerryCommandLine.main()
