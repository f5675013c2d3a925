"""The folders a Spark write makes for its output on a file system other than this machine's
(``hdfs://``, ``s3a://``, ...), made and, when the write fails, removed again through Hadoop's
FileSystem API, as ``herbrand.framework.whole_outputs.MadeFolders`` does on this machine's:
a failed run removes the folders it made, only those, and only while they are empty.

``HadoopFolders.make_parent`` makes an output's folder and its missing parents ahead of the write
(Hadoop's writers would make them unrecorded) and records those that were missing. Hadoop
has no call that makes one folder or fails when it exists (``mkdirs`` answers true either
way), so a folder another process makes between the check and the ``mkdirs`` is recorded
too; it is removed only if it is still empty when the write fails. ``remove_empty``, the
deepest first, deletes a recorded path only when it is a directory listing nothing, and
then without recursion (a file system refuses to delete a directory that is not empty).

Cost: a call per folder checked (``exists``, up to the first existing one) and one
``mkdirs``; on failure, three calls per recorded folder.
"""

from __future__ import annotations

from contextlib import suppress

from pyspark.sql import SparkSession


class HadoopFolders:
    """The folders made through ``make_parent``, in the file systems of ``session``'s Hadoop
    configuration, which ``remove_empty`` removes again (see the module doc)."""

    def __init__(self, session: SparkSession):
        context = session.sparkContext
        self._paths = context._jvm.org.apache.hadoop.fs
        self._configuration = context._jsc.hadoopConfiguration()
        self._made: list[object] = []  # Hadoop Paths, the highest first

    def make_parent(self, path: str) -> None:
        """Make the folder of ``path`` (a URI, or a path of the default file system) and its
        missing parents, recording each that was missing. Raises Java's failure (a file in
        the way: ``ParentNotDirectoryException``, ``FileAlreadyExistsException``) as Py4J
        gives it."""
        target = self._paths.Path(path).getParent()
        file_system = target.getFileSystem(self._configuration)
        missing, folder = [], target
        while folder is not None and not file_system.exists(folder):
            missing.append(folder)
            folder = folder.getParent()
        file_system.mkdirs(target)
        self._made.extend(reversed(missing))

    def remove_empty(self) -> None:
        """Delete each folder ``make_parent`` recorded that is an empty directory now (one emptied
        by deleting one below it too), the last made first. One that cannot be deleted
        stays."""
        for folder in reversed(self._made):
            with suppress(Exception):
                file_system = folder.getFileSystem(self._configuration)
                if (file_system.getFileStatus(folder).isDirectory()
                        and not file_system.listStatus(folder)):
                    file_system.delete(folder, False)
        self._made.clear()
