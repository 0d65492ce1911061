from ankigen.cli import main

main()
